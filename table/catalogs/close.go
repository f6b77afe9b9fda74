package catalogs

import "io"

// Close releases what the wrapped catalog holds, such as the SQL catalog's
// database connection pool, when it holds anything. A caller that opens
// many catalogs in one process (a test suite, a scheduler) closes each
// when done: callers reach it with
//
//	if c, ok := cat.(io.Closer); ok { c.Close() }
func (c *retryCatalog) Close() error {
	if cl, ok := c.Catalog.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
