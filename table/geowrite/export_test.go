package geowrite

// Pieces is pieces, for tests.
var Pieces = pieces
