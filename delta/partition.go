package delta

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PartitionValue is a parsed partition value: nil (null), string, int8,
// int16, int32, int64, float32, float64, bool, []byte, time.Time (date: UTC
// midnight; timestamp: UTC; timestamp_ntz: wall clock as UTC) or
// decimal128.Num (unscaled, with the column's scale).
type PartitionValue any

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
}

// ParsePartitionValue parses a serialised partition value of type dt. A nil
// or empty raw value is null. Timestamps written without a zone are taken as
// UTC (the protocol leaves them in the writer's zone, which the log does not
// record).
func ParsePartitionValue(raw *string, dt DataType) (PartitionValue, error) {
	if raw == nil || *raw == "" {
		return nil, nil
	}
	s := *raw
	var v PartitionValue
	var err error
	switch t := dt.(type) {
	case *DecimalType:
		v, err = decimal128.FromString(s, t.Precision, t.Scale)
	case *PrimitiveType:
		v, err = parsePrimitiveValue(s, t.Name)
	default:
		err = fmt.Errorf("type %s cannot be a partition column", dt.typeName())
	}
	if err != nil {
		return nil, fmt.Errorf("partition value %q as %s: %w", s, dt.typeName(), err)
	}
	return v, nil
}

func parsePrimitiveValue(s, name string) (PartitionValue, error) {
	switch name {
	case "string":
		return s, nil
	case "binary":
		return []byte(s), nil
	case "boolean":
		return strconv.ParseBool(strings.ToLower(s))
	case "byte":
		n, err := strconv.ParseInt(s, 10, 8)
		return int8(n), err
	case "short":
		n, err := strconv.ParseInt(s, 10, 16)
		return int16(n), err
	case "integer":
		n, err := strconv.ParseInt(s, 10, 32)
		return int32(n), err
	case "long":
		return strconv.ParseInt(s, 10, 64)
	case "float":
		f, err := strconv.ParseFloat(s, 32)
		return float32(f), err
	case "double":
		return strconv.ParseFloat(s, 64)
	case "date":
		return time.Parse("2006-01-02", s)
	case "timestamp", "timestamp_ntz":
		for _, l := range timestampLayouts {
			if ts, err := time.Parse(l, s); err == nil {
				return ts.UTC(), nil
			}
		}
		return nil, fmt.Errorf("not a timestamp")
	}
	return nil, fmt.Errorf("unsupported type")
}

// constantArray builds an array of n copies of v with Arrow type dt.
func constantArray(mem memory.Allocator, v PartitionValue, dt arrow.DataType, n int) (arrow.Array, error) {
	if v == nil {
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if err := appendValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

func appendValue(b array.Builder, v PartitionValue) error {
	switch b := b.(type) {
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int8Builder:
		b.Append(v.(int8))
	case *array.Int16Builder:
		b.Append(v.(int16))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(v.(float32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Date32Builder:
		b.Append(arrow.Date32FromTime(v.(time.Time)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	case *array.Decimal128Builder:
		b.Append(v.(decimal128.Num))
	default:
		return fmt.Errorf("partition column of arrow type %s is not supported", b.Type())
	}
	return nil
}
