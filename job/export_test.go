package job

// SetScatterHold sets how many bytes a scatter unit holds before it
// writes, and returns what restores it.
func SetScatterHold(n int64) func() {
	old := scatterHold
	scatterHold = n
	return func() { scatterHold = old }
}
