package icebergtable

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	format "github.com/geocompact/geocompact/table"
)

func partitionTestSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "name", Type: iceberg.PrimitiveTypes.String},
	)
}

// TestParsePartitionSpecSparkSpellings checks that Spark's plural
// transforms and argument orders mean the same specs as Iceberg's names.
func TestParsePartitionSpecSparkSpellings(t *testing.T) {
	sc := partitionTestSchema()
	for spark, iceberg := range map[string]string{
		"days(ts)":                 "day(ts)",
		"hours(ts)":                "hour(ts)",
		"years(ts), bucket(4, id)": "year(ts), bucket(4, id)",
		"months(ts)":               "month(ts)",
		"bucket(16, id)":           "bucket(16, id)",
		"bucket(id, 16)":           "bucket(16, id)",
		"truncate(4, name)":        "truncate(4, name)",
		"truncate(name, 4)":        "truncate(4, name)",
		"DAYS(ts), identity(id)":   "day(ts), id",
		"date(ts)":                 "day(ts)",
		"date_hour(ts)":            "hour(ts)",
	} {
		got, err := ParsePartitionSpec(spark, sc)
		require.NoError(t, err, spark)
		assert.Equal(t, iceberg, FormatPartitionSpec(got, sc), spark)
		want, err := ParsePartitionSpec(iceberg, sc)
		require.NoError(t, err, iceberg)
		assert.True(t, SamePartitioning(want, got), spark)
	}
	assert.Equal(t, "unpartitioned", FormatPartitionSpec(*iceberg.UnpartitionedSpec, sc))
}

// TestValidatePartitionSpecRefusesUnknownTransforms checks that a bad
// transform fails without a schema (table.ParsePartitioning), listing the valid ones.
func TestValidatePartitionSpecRefusesUnknownTransforms(t *testing.T) {
	ValidatePartitionSpec := func(expr string) error {
		_, err := format.ParsePartitioning(expr)
		return err
	}
	for in, want := range map[string]string{
		"weeks(ts)":      `unknown transform "weeks"`,
		"dayz(ts)":       "did you mean day?",
		"bucket(ts)":     "want bucket(N, column)",
		"bucket(0, id)":  "positive whole N",
		"truncate(a, b)": "positive whole N",
		"day(ts":         "want transform(column)",
	} {
		err := ValidatePartitionSpec(in)
		require.ErrorIs(t, err, format.ErrPartitionSpec, in)
		assert.ErrorContains(t, err, want, in)
		if in == "weeks(ts)" {
			assert.ErrorContains(t, err, "identity, year, years, month, months, day, days")
		}
	}
	require.NoError(t, ValidatePartitionSpec("days(ts), bucket(16, id)"))
	_, err := ParsePartitionSpec("day(when)", partitionTestSchema())
	assert.ErrorContains(t, err, `no column "when" (columns: id, ts, name)`)
	a, _ := ParsePartitionSpec("day(ts)", partitionTestSchema())
	b, _ := ParsePartitionSpec("hour(ts)", partitionTestSchema())
	assert.False(t, SamePartitioning(a, b))
}
