package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	pass    = Result{State: "passed"}
	fail    = Result{State: "failed", Failure: "timed out"}
	skipped = Result{State: "skipped", Failure: "only on gce"}
)

func listOf(t *testing.T, reason string, specs ...string) List {
	t.Helper()
	list, err := ReadList(writeList(t, "# "+reason+"\n"+strings.Join(specs, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func TestVerdictSideBySide(t *testing.T) {
	limits := listOf(t, "needs exec", "limited")
	differences := listOf(t, "on purpose", "different")
	for name, tc := range map[string]struct {
		kcm, rs Result
		spec    string
		fails   string
	}{
		"both pass":                                {pass, pass, "spec", ""},
		"both fail":                                {fail, fail, "spec", ""},
		"kcm-rs fails what upstream passed":        {pass, fail, "spec", "kcm-rs did not pass"},
		"kcm-rs skips what upstream passed":        {pass, skipped, "spec", "kcm-rs did not pass"},
		"kcm-rs passes what upstream failed":       {fail, pass, "spec", ""},
		"a listed difference":                      {pass, fail, "different", ""},
		"a listed difference kcm-rs passes":        {pass, pass, "different", "but kcm-rs passed"},
		"a listed limit":                           {fail, fail, "limited", ""},
		"a listed limit upstream passes":           {pass, pass, "limited", "but kube-controller-manager passed"},
		"a listed limit upstream passes, rs fails": {pass, fail, "limited", "kcm-rs did not pass"},
	} {
		t.Run(name, func(t *testing.T) {
			opts := Options{Programs: Programs, Limits: limits, Differences: differences}
			runs := map[string]Results{KubeControllerManager: {tc.spec: tc.kcm}, KcmRs: {tc.spec: tc.rs}}
			checkVerdict(t, newTable(runs, opts).verdict(), tc.fails)
		})
	}
}

func TestVerdictOfKcmRsAlone(t *testing.T) {
	limits := listOf(t, "needs exec", "limited")
	for name, tc := range map[string]struct {
		rs    Result
		spec  string
		fails string
	}{
		"passes":                   {pass, "spec", ""},
		"fails":                    {fail, "spec", "kcm-rs did not pass"},
		"skips itself":             {skipped, "spec", ""},
		"fails a limit of the bed": {fail, "limited", ""},
	} {
		t.Run(name, func(t *testing.T) {
			opts := Options{Programs: []string{KcmRs}, Limits: limits}
			checkVerdict(t, newTable(map[string]Results{KcmRs: {tc.spec: tc.rs}}, opts).verdict(), tc.fails)
		})
	}
}

func TestVerdictCountsASpecKcmRsNeverRanAsNotPassed(t *testing.T) {
	runs := map[string]Results{KubeControllerManager: {"spec": pass}, KcmRs: {}}
	checkVerdict(t, newTable(runs, Options{Programs: Programs}).verdict(), "kcm-rs did not pass: spec")
}

func checkVerdict(t *testing.T, err error, fails string) {
	t.Helper()
	switch {
	case fails == "" && err != nil:
		t.Errorf("failed: %v", err)
	case fails != "" && err == nil:
		t.Errorf("passed; want a failure saying %q", fails)
	case fails != "" && !strings.Contains(err.Error(), fails):
		t.Errorf("failed with %q; want %q", err, fails)
	}
}

func TestTheTableShowsEachSpecsResultsTimesAndWhy(t *testing.T) {
	limits := listOf(t, "needs exec", "[sig-apps] limited | piped")
	runs := map[string]Results{
		KubeControllerManager: {"[sig-apps] limited | piped": fail, "[sig-apps] ok": {State: "passed", Time: 1500e6}, "[sig-apps] to fix": pass},
		KcmRs:                 {"[sig-apps] limited | piped": fail, "[sig-apps] ok": {State: "passed", Time: 2e9}},
	}
	dir := t.TempDir()
	if err := newTable(runs, Options{Programs: Programs, Limits: limits, Focus: "x"}).write(dir); err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(dir, "conformance.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| specs passed | 2 of 3 | 1 of 2 |",
		`| [sig-apps] limited \| piped | **failed**, 0.0 s | **failed**, 0.0 s | the testbed: needs exec |`,
		"| [sig-apps] ok | passed, 1.5 s | passed, 2.0 s |  |",
		"| [sig-apps] to fix | passed, 0.0 s | not run | kcm-rs differs: to fix |",
	} {
		if !strings.Contains(string(table), row+"\n") {
			t.Errorf("no row %q in\n%s", row, table)
		}
	}
	failures, err := os.ReadFile(filepath.Join(dir, "failures.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(failures), "- [sig-apps] limited | piped: failed\n  timed out\n") {
		t.Errorf("failures.md:\n%s", failures)
	}
}

func TestTheListedSpecsAreSkippedOnlyWhenAsked(t *testing.T) {
	opts := Options{
		Skip:        `\[Feature:OffByDefault\]`,
		Limits:      listOf(t, "needs exec", "[sig-apps] A (spec)"),
		Differences: listOf(t, "on purpose", "[sig-apps] B"),
	}
	if got := skipPattern(opts); got != opts.Skip {
		t.Errorf("without SkipListed: %q", got)
	}
	opts.SkipListed = true
	want := `\[Feature:OffByDefault\]| \[sig-apps\] A \(spec\)$| \[sig-apps\] B$`
	if got := skipPattern(opts); got != want {
		t.Errorf("with SkipListed: %q, want %q", got, want)
	}
}
