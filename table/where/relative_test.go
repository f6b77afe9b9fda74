package where

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseRelativeTimes checks now(), current_date and intervals against
// a fixed run time, in UTC whatever the local zone.
func TestParseRelativeTimes(t *testing.T) {
	setLocal(t, time.FixedZone("X", -7*3600))
	sc := whereSchema(t)
	now := time.Date(2026, 3, 10, 15, 30, 0, 0, time.FixedZone("Y", 2*3600)) // 13:30Z
	utc := now.UTC()
	midnight := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	ts := func(t time.Time) iceberg.Literal { return iceberg.NewLiteral(iceberg.Timestamp(t.UnixMicro())) }
	date := func(t time.Time) iceberg.Literal { return iceberg.NewLiteral(iceberg.Date(t.Unix() / 86400)) }
	for in, want := range map[string]iceberg.Literal{
		"ts >= now()":                                    ts(utc),
		"ts >= NOW ( )":                                  ts(utc),
		"ts >= current_timestamp":                        ts(utc),
		"ts >= now() - interval '1 day'":                 ts(utc.AddDate(0, 0, -1)),
		"ts >= now() - INTERVAL '7 days'":                ts(utc.AddDate(0, 0, -7)),
		"ts >= now() - interval '2 hours'":               ts(utc.Add(-2 * time.Hour)),
		"ts < now() + interval '30 minutes'":             ts(utc.Add(30 * time.Minute)),
		"ts >= now()-interval '1 day'-interval '1 hour'": ts(utc.Add(-25 * time.Hour)),
		"ts >= current_date":                             ts(midnight),
		"day = current_date":                             date(midnight),
		"day >= current_date - interval '1 day'":         date(midnight.AddDate(0, 0, -1)),
		"day >= current_date - interval '1 month'":       date(midnight.AddDate(0, -1, 0)),
		"now() - interval '1 day' <= ts":                 ts(utc.AddDate(0, 0, -1)),
	} {
		e, err := ParseAt(in, sc, now)
		require.NoError(t, err, in)
		got := boundLiteral(t, sc, e)
		assert.True(t, got.Equals(want), "%s: got %v, want %v", in, got, want)
	}
	for in, want := range map[string]string{
		"ts > now() - 1":                                                 `want INTERVAL 'n unit' after now() -`,
		"ts > now() - interval '1 fortnight'":                            `unknown unit "fortnight"`,
		"ts > now() - interval 'a day'":                                  "want a whole number of day",
		"ts > now() - interval '1'":                                      "want 'n unit'",
		"day >= current_date - interval '2 hours'":                       `does not fit column "day"`,
		"day >= now()":                                                   `does not fit column "day"`,
		"ts > now() - interval '1000000 years'":                          "out of range",
		"ts < now() + interval '300000 years'":                           "out of range",
		"ts > now() - interval '200000 years' - interval '200000 years'": "out of range",
		"day >= current_date - interval '1000000 years'":                 "out of range",
	} {
		_, err := ParseAt(in, sc, now)
		require.ErrorIs(t, err, ErrInvalid, in)
		assert.ErrorContains(t, err, want, in)
	}
}

// TestParseBBoxAntimeridian checks that a window with minx > maxx crosses
// the antimeridian: it matches files in either half, and none between.
func TestParseBBoxAntimeridian(t *testing.T) {
	sc := whereSchema(t)
	eval, err := iceberg.ExpressionEvaluator(sc, mustParseWhere(t, "bbox(170, 50, -170, 60)", sc), true)
	require.NoError(t, err)
	for _, tc := range []struct {
		box  [4]float64
		want bool
	}{
		{[4]float64{175, 55, 176, 56}, true},    // east half
		{[4]float64{-179, 51, -175, 52}, true},  // west half
		{[4]float64{160, 55, 170, 56}, true},    // touches minx
		{[4]float64{-170, 55, -160, 56}, true},  // touches maxx
		{[4]float64{0, 55, 10, 56}, false},      // between, across the prime meridian
		{[4]float64{-169, 50, 169, 60}, false},  // a wide file inside the gap
		{[4]float64{175, 61, 176, 62}, false},   // east half, too far north
		{[4]float64{-175, 40, -174, 49}, false}, // west half, too far south
	} {
		got, err := eval(row(t, sc, map[string]any{"bbox_minx": tc.box[0], "bbox_miny": tc.box[1], "bbox_maxx": tc.box[2], "bbox_maxy": tc.box[3]}))
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%v", tc.box)
	}
	v3 := whereV3Schema(t)
	want := iceberg.NewOr(
		iceberg.BBoxIntersects(ref("geom"), iceberg.BoundingBox{MinX: 170, MinY: 50, MaxX: 180, MaxY: 60}),
		iceberg.BBoxIntersects(ref("geom"), iceberg.BoundingBox{MinX: -180, MinY: 50, MaxX: -170, MaxY: 60}))
	assert.True(t, mustParseWhere(t, "bbox(170, 50, -170, 60)", v3).Equals(want))
	_, err = Parse("bbox(0, 10, 1, 5)", sc)
	assert.ErrorContains(t, err, "bbox miny 10 > maxy 5", "y never wraps")
}

// TestParseRelativeTimesRealClock parses now() and current_timestamp with
// the real clock, whose nanoseconds a microsecond column cannot hold: they
// are truncated to the column's precision (microseconds for timestamp and
// timestamptz, nanoseconds for timestamp_ns), never refused.
func TestParseRelativeTimesRealClock(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 2, Name: "lts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 3, Name: "tsn", Type: iceberg.PrimitiveTypes.TimestampTzNs},
	)
	for _, in := range []string{
		"ts > now() - interval '1 day'", "lts > current_timestamp - interval '1 day'",
		"tsn > now() - interval '1 day'", "ts >= now() - interval '90 seconds' - interval '1 day'",
	} {
		for range 5 { // the clock may land on a whole microsecond, but not five times
			before := time.Now().Add(-24 * time.Hour)
			e, err := Parse(in, sc)
			after := time.Now().Add(-24 * time.Hour)
			require.NoError(t, err, in)
			var got time.Time
			switch v := boundLiteral(t, sc, e).(type) {
			case iceberg.TypedLiteral[iceberg.Timestamp]:
				got = time.UnixMicro(int64(v.Value()))
				assert.Zero(t, got.Nanosecond()%1000, in)
				before = before.Truncate(time.Microsecond)
			case iceberg.TypedLiteral[iceberg.TimestampNano]:
				got = time.Unix(0, int64(v.Value()))
			default:
				t.Fatalf("%s: literal %T", in, v)
			}
			if strings.Contains(in, "90 seconds") {
				before, after = before.Add(-90*time.Second), after.Add(-90*time.Second)
			}
			assert.False(t, got.Before(before) || got.After(after), "%s: %v not in [%v, %v]", in, got, before, after)
		}
	}
}
