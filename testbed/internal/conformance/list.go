package conformance

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// List is a file of specs, each with the reason written above it:
//
//	# Why the specs below are here (one or more comment lines).
//	[sig-apps] ReplicaSet should serve a basic image on each replica ...
//	[sig-apps] Deployment ...
//
//	# The next group's reason.
//	...
//
// A blank line ends a group: the next comment starts a new reason.
type List struct {
	reasons map[string]string
	order   []string
}

// ReadList reads the list at path; an empty path is an empty list.
func ReadList(path string) (List, error) {
	list := List{reasons: map[string]string{}}
	if path == "" {
		return list, nil
	}
	file, err := os.Open(path)
	if err != nil {
		return list, err
	}
	defer file.Close()
	var reason []string
	inSpecs := false
	scanner := bufio.NewScanner(file)
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		switch {
		case text == "":
			reason, inSpecs = nil, false
		case strings.HasPrefix(text, "#"):
			if inSpecs {
				reason, inSpecs = nil, false
			}
			reason = append(reason, strings.TrimSpace(strings.TrimPrefix(text, "#")))
		default:
			if len(reason) == 0 {
				return list, fmt.Errorf("%s:%d: a spec with no reason above it", path, line)
			}
			if _, dup := list.reasons[text]; dup {
				return list, fmt.Errorf("%s:%d: %q is listed twice", path, line, text)
			}
			inSpecs = true
			list.reasons[text] = strings.Join(reason, " ")
			list.order = append(list.order, text)
		}
	}
	return list, scanner.Err()
}

// Specs are the listed specs, in the file's order.
func (l List) Specs() []string { return l.order }

// Reason is why spec is listed, and whether it is.
func (l List) Reason(spec string) (string, bool) {
	reason, ok := l.reasons[spec]
	return reason, ok
}
