//go:build e2esuite

// Package e2esuite keeps upstream's end-to-end suite, k8s.io/kubernetes/test/e2e
// at the version go.mod pins, among the testbed module's requirements, so
// that scripts/conformance can build its test binary with
//
//	go test -c -o e2e.test k8s.io/kubernetes/test/e2e
//
// The build tag keeps it out of every build: go mod tidy reads it, nothing
// compiles it.
package e2esuite

import _ "k8s.io/kubernetes/test/e2e"
