//go:build toolgatefaults

package main

import (
	"os"
	"time"
)

// testFault injects a fault at a named point of the hook, for the fault
// tests only (built with -tags toolgatefaults; release builds have no such
// knob): TOOLGATE_HOOK_TEST_FAULT=panic@POINT or hang@POINT, POINT one of
// start, decide, answer.
func testFault(point string) {
	switch os.Getenv("TOOLGATE_HOOK_TEST_FAULT") {
	case "panic@" + point:
		panic("injected fault at " + point)
	case "hang@" + point:
		time.Sleep(time.Hour)
	}
}
