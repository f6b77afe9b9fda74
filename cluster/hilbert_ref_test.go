package cluster

// refHilbert2 is the textbook rotate-and-flip Hilbert index of (x, y) on a
// 2^order grid: at each level from the top it reads the quadrant, adds its
// digit, and rotates the remaining coordinates into the quadrant's frame.
func refHilbert2(order int, x, y uint64) uint64 {
	var d uint64
	for s := uint64(1) << uint(order-1); s > 0; s >>= 1 {
		var rx, ry uint64
		if x&s != 0 {
			rx = 1
		}
		if y&s != 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		if ry == 0 {
			if rx == 1 {
				x = s - 1 - x&(s-1)
				y = s - 1 - y&(s-1)
			}
			x, y = y, x
		}
	}
	return d
}
