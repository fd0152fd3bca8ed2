package audit

import (
	"testing"
	"time"
	_ "time/tzdata" // the zone database in the test binary: the test never depends on the machine's

	"github.com/stretchr/testify/assert"
)

func TestZoneName(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatalf("time/tzdata is linked in: %v", err)
	}
	assert.Equal(t, "UTC", zoneName(nil))
	assert.Equal(t, "UTC", zoneName(time.UTC))
	assert.Equal(t, "Asia/Tokyo", zoneName(tokyo))
	assert.Equal(t, "Etc/GMT-9", zoneName(time.FixedZone("", 9*3600)))
	t.Setenv("TZ", ":Europe/Berlin")
	assert.Equal(t, "Europe/Berlin", zoneName(time.Local), "time.Local is named from $TZ")
	t.Setenv("TZ", "")
	assert.NotEqual(t, "Local", zoneName(time.Local))
}
