package audit

import (
	"testing"
	"time"
	_ "time/tzdata"
)

// TestWholeHourZone: a zone is whole only if its offset is a whole hour
// at every instant of the range, not only at its ends and now (the red
// team's Lord Howe, session 13: +11 on both ends, +10:30 in June).
func TestWholeHourZone(t *testing.T) {
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name         string
		loc          *time.Location
		since, until time.Time
		want         bool
	}{
		{"no zone", nil, time.Time{}, time.Time{}, true},
		{"UTC, all time", time.UTC, time.Time{}, time.Time{}, true},
		{"London, all time from 1970", zone("Europe/London"), time.Time{}, time.Time{}, true},
		{"Kolkata", zone("Asia/Kolkata"), day(2026, 1, 1), day(2026, 2, 1), false},
		{"Lord Howe, a summer month (+11)", zone("Australia/Lord_Howe"), day(2026, 1, 1), day(2026, 2, 1), true},
		{"Lord Howe, summer to summer across its +10:30 winter", zone("Australia/Lord_Howe"), day(2026, 1, 1), day(2026, 12, 1), false},
		{"Caracas across its −4:30 years", zone("America/Caracas"), day(2006, 1, 1), day(2020, 1, 1), false},
		{"Caracas after them", zone("America/Caracas"), day(2017, 1, 1), day(2020, 1, 1), true},
		{"Caracas from 2017 on, open-ended", zone("America/Caracas"), day(2017, 1, 1), time.Time{}, true},
		{"Caracas, all time", zone("America/Caracas"), time.Time{}, time.Time{}, false},
		{"New York, a year", zone("America/New_York"), day(2025, 1, 1), day(2026, 1, 1), true},
		{"an inverted range in Kolkata", zone("Asia/Kolkata"), day(2025, 1, 1), day(2024, 1, 1), false},
		{"Lord Howe in winter, past 2106, open-ended", zone("Australia/Lord_Howe"), day(2200, 6, 1), time.Time{}, false},
		{"Troll's two-hour shift", zone("Antarctica/Troll"), day(2024, 1, 1), day(2026, 1, 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wholeHourZone(tt.loc, tt.since, tt.until); got != tt.want {
				t.Fatalf("wholeHourZone = %v, want %v", got, tt.want)
			}
		})
	}
}
