//go:build !toolgatefaults

package main

// testFault is a no-op in release builds (see faults_on.go).
func testFault(string) {}
