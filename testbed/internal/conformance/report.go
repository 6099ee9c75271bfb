package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// Result is how one spec went in one run.
type Result struct {
	// State is ginkgo's: passed, failed, skipped (by the spec itself,
	// at run time), panicked, timedout, interrupted, aborted.
	State string `json:"state"`
	// Time is how long the spec ran.
	Time time.Duration `json:"time"`
	// Failure is the first line of the failure (or skip) message, and
	// where it was raised.
	Failure string `json:"failure,omitempty"`
}

// Passed reports whether the spec passed.
func (r Result) Passed() bool { return r.State == types.SpecStatePassed.String() }

// Failed reports whether the spec ran and did not pass: neither passed
// nor skipped itself (a spec skips itself when the cluster lacks what it
// tests, whatever the controller manager).
func (r Result) Failed() bool {
	return r.State != "" && !r.Passed() && r.State != types.SpecStateSkipped.String()
}

// Results are one run's results by spec text.
type Results map[string]Result

// readReport reads the specs that ran from ginkgo's JSON report; specs
// the focus or skip patterns left out are not there.
func readReport(path string) (Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("reading ginkgo's report %s: %w", path, err)
	}
	results := Results{}
	for _, report := range reports {
		for _, spec := range report.SpecReports {
			if spec.LeafNodeType != types.NodeTypeIt {
				continue
			}
			// A spec the patterns filtered out is skipped with no message;
			// one that skipped itself says why.
			if spec.State == types.SpecStateSkipped && spec.Failure.Message == "" {
				continue
			}
			results[spec.FullText()] = Result{
				State:   spec.State.String(),
				Time:    spec.RunTime.Round(100 * time.Millisecond),
				Failure: failure(spec),
			}
		}
	}
	return results, nil
}

// failure is the first line of a spec's failure message and its location,
// or nothing for a spec that passed.
func failure(spec types.SpecReport) string {
	if spec.State == types.SpecStatePassed {
		return ""
	}
	message, _, _ := strings.Cut(strings.TrimSpace(spec.Failure.Message), "\n")
	if len(message) > 300 {
		message = message[:300] + "..."
	}
	if spec.Failure.Location.FileName == "" {
		return message
	}
	return fmt.Sprintf("%s (%s:%d)", message, trimModulePath(spec.Failure.Location.FileName), spec.Failure.Location.LineNumber)
}

// trimModulePath shortens a path in the module cache to the module and
// the file: k8s.io/kubernetes@v1.37.2/test/e2e/apps/job.go.
func trimModulePath(file string) string {
	if _, rest, ok := strings.Cut(file, "/pkg/mod/"); ok {
		return rest
	}
	return file
}
