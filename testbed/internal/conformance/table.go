package conformance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// table is a run's results side by side.
type table struct {
	runs  map[string]Results
	opts  Options
	specs []string
	// refused are the lines of kcm-rs's log that say the API server
	// refused it.
	refused []string
}

func newTable(runs map[string]Results, opts Options) table {
	seen := map[string]bool{}
	for _, results := range runs {
		for spec := range results {
			seen[spec] = true
		}
	}
	specs := make([]string, 0, len(seen))
	for spec := range seen {
		specs = append(specs, spec)
	}
	slices.Sort(specs)
	return table{runs: runs, opts: opts, specs: specs}
}

// write writes conformance.md (the counts and the table) and failures.md
// (each failure's message) into dir.
func (t table) write(dir string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Run of %s, focus `%s`", time.Now().UTC().Format("2006-01-02"), t.opts.Focus)
	if t.opts.Skip != "" {
		fmt.Fprintf(&b, ", skip `%s`", t.opts.Skip)
	}
	if t.opts.SkipListed {
		b.WriteString(", the listed specs left out")
	}
	b.WriteString(".\n\n| | " + strings.Join(t.opts.Programs, " | ") + " |\n|---|")
	b.WriteString(strings.Repeat("---|", len(t.opts.Programs)) + "\n| specs passed |")
	for _, program := range t.opts.Programs {
		fmt.Fprintf(&b, " %d of %d |", passed(t.runs[program]), len(t.runs[program]))
	}
	b.WriteString("\n\n| Spec | " + strings.Join(t.opts.Programs, " | ") + " | Why |\n|---|")
	b.WriteString(strings.Repeat("---|", len(t.opts.Programs)) + "---|\n")
	for _, spec := range t.specs {
		b.WriteString("| " + escape(spec) + " |")
		for _, program := range t.opts.Programs {
			b.WriteString(" " + cell(t.runs[program], spec) + " |")
		}
		b.WriteString(" " + escape(t.why(spec)) + " |\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "conformance.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "failures.md"), []byte(t.failures()), 0o644)
}

// why is a listed spec's reason, or, for a spec kcm-rs fails and
// kube-controller-manager passed, that it is a difference to fix.
func (t table) why(spec string) string {
	if reason, ok := t.opts.Differences.Reason(spec); ok {
		return "deliberate: " + reason
	}
	if reason, ok := t.opts.Limits.Reason(spec); ok {
		return "the testbed: " + reason
	}
	if t.regressed(spec) {
		return "kcm-rs differs: to fix"
	}
	return ""
}

// regressed reports whether kube-controller-manager passed spec in this
// run and kcm-rs did not.
func (t table) regressed(spec string) bool {
	kcm, ran := t.runs[KubeControllerManager]
	if !ran {
		return false
	}
	rs, ran := t.runs[KcmRs]
	return ran && kcm[spec].Passed() && !rs[spec].Passed()
}

func (t table) failures() string {
	var b strings.Builder
	for _, program := range t.opts.Programs {
		fmt.Fprintf(&b, "# Specs %s did not pass\n\n", program)
		for _, spec := range t.specs {
			if r, ran := t.runs[program][spec]; ran && !r.Passed() {
				fmt.Fprintf(&b, "- %s: %s\n  %s\n", spec, r.State, r.Failure)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// verdict fails on every spec kcm-rs did not pass that it should have: one
// kube-controller-manager passed in the same run or, when kcm-rs ran
// alone, any spec that failed (not one that skipped itself) and is not a
// limit of the testbed; a listed difference is not a failure. It fails too on
// a listed spec the list is wrong about (a limit of the testbed that
// kube-controller-manager passed, a difference kcm-rs passed), and on
// every refusal of kcm-rs.
func (t table) verdict() error {
	var problems []string
	kcm, kcmRan := t.runs[KubeControllerManager]
	rs, rsRan := t.runs[KcmRs]
	for _, spec := range t.specs {
		_, different := t.opts.Differences.Reason(spec)
		_, limited := t.opts.Limits.Reason(spec)
		switch {
		case rsRan && !different && (kcm[spec].Passed() && !rs[spec].Passed() || !kcmRan && !limited && rs[spec].Failed()):
			problems = append(problems, "kcm-rs did not pass: "+spec)
		case kcmRan && limited && kcm[spec].Passed():
			problems = append(problems, "listed as a limit of the testbed, but kube-controller-manager passed: "+spec)
		case rsRan && different && rs[spec].Passed():
			problems = append(problems, "listed as a deliberate difference, but kcm-rs passed: "+spec)
		}
	}
	for _, line := range t.refused {
		problems = append(problems, "kcm-rs was refused (403): "+line)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// cell is a spec's result in one run: its state and time, or "not run".
func cell(results Results, spec string) string {
	r, ran := results[spec]
	if !ran {
		return "not run"
	}
	state := r.State
	if !r.Passed() {
		state = "**" + state + "**"
	}
	return fmt.Sprintf("%s, %.1f s", state, r.Time.Seconds())
}

// escape keeps a spec's text inside its table cell.
func escape(text string) string {
	return strings.ReplaceAll(text, "|", `\|`)
}
