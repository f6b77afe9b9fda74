package geowrite

// Pieces is pieces, for tests.
var Pieces = pieces

// AlignedPieces is alignedPieces.
var AlignedPieces = alignedPieces
