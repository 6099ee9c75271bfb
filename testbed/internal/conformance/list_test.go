package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeList(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "list.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadListGivesEachSpecTheReasonAboveItsGroup(t *testing.T) {
	path := writeList(t, `# The file's own header,
# ended by a blank line.

# Needs exec.
# Two lines of reason.
[sig-apps] A spec
[sig-apps] B spec

# Needs an RC.
[sig-api-machinery] C spec
`)
	list, err := ReadList(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(list.Specs(), ";"); got != "[sig-apps] A spec;[sig-apps] B spec;[sig-api-machinery] C spec" {
		t.Errorf("specs: %s", got)
	}
	for spec, want := range map[string]string{
		"[sig-apps] A spec":          "Needs exec. Two lines of reason.",
		"[sig-apps] B spec":          "Needs exec. Two lines of reason.",
		"[sig-api-machinery] C spec": "Needs an RC.",
	} {
		if got, ok := list.Reason(spec); !ok || got != want {
			t.Errorf("reason of %q: %q, %v; want %q", spec, got, ok, want)
		}
	}
	if _, ok := list.Reason("[sig-apps] unlisted"); ok {
		t.Error("an unlisted spec has a reason")
	}
}

func TestReadListRefusesASpecWithoutReasonOrListedTwice(t *testing.T) {
	for name, text := range map[string]string{
		"no reason": "# header\n\n[sig-apps] A spec\n",
		"twice":     "# why\n[sig-apps] A spec\n\n# why again\n[sig-apps] A spec\n",
	} {
		if _, err := ReadList(writeList(t, text)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}

func TestReadListOfNoPathIsEmpty(t *testing.T) {
	list, err := ReadList("")
	if err != nil || len(list.Specs()) != 0 {
		t.Errorf("%v, %v", list.Specs(), err)
	}
}

func TestTheRepositorysListsRead(t *testing.T) {
	for _, file := range []string{"limits.txt", "differences.txt"} {
		if _, err := ReadList(filepath.Join("..", "..", "conformance", file)); err != nil {
			t.Errorf("testbed/conformance/%s: %v", file, err)
		}
	}
}
