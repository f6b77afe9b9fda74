// Package restcatalog is a test-only Iceberg REST catalog server. It speaks
// the Iceberg REST catalog protocol (the apache/iceberg OpenAPI document
// rest-catalog-open-api.yaml) over iceberg-go's SQL catalog on a SQLite
// file, so geocompact's REST catalog configuration can be tested against a
// real server: iceberg-go's REST client talks to it as it would to Polaris,
// Nessie or Lakekeeper.
//
// What it serves:
//   - GET /v1/config, with an optional prefix in the overrides, so every
//     other route lives under /v1/{prefix}/. A client asking for a warehouse
//     other than the server's own gets a catalog of its own for it, under a
//     prefix derived from the warehouse.
//   - Namespaces: list (with parent), create, load, exists, drop and
//     property updates.
//   - Tables: list, create (also staged), load, exists, register, rename,
//     drop (with purge) and commit.
//   - POST /v1/oauth/tokens (OAuth2 client credentials) and bearer checks on
//     every other route when the server has credentials.
//
// Invariants:
//   - A commit checks every requirement against the table's current
//     metadata while it holds the table's lock, and answers 409
//     CommitFailedException when one fails, so clients refresh and retry.
//     Of two racing commits with the same base, exactly one wins.
//   - Metadata is built and written by iceberg-go's SQL catalog, whose
//     compare-and-swap on the metadata location backs up the lock.
//   - Every error body has the spec's ErrorModel shape:
//     {"error": {"message", "type", "code"}}.
//
// Multi-table transactions (POST /v1/{prefix}/transactions/commit) and views
// are not served and not advertised. The server is for tests: it trusts any
// warehouse a client names and keeps tokens in memory.
package restcatalog
