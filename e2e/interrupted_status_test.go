package e2e_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// auditq finds interrupted calls (`auditq decisions --interrupted`,
// audit.Filter.Interrupted) by the status message the spool uploads them
// with; audit does not import the runtime, so the two constants are held
// equal here.
func TestInterruptedStatusIsTheSpools(t *testing.T) {
	assert.Equal(t, spool.InterruptedMessage, audit.InterruptedStatus)
}
