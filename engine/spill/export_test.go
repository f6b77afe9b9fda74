package spill

// FitOpenFiles is fitOpenFiles, for tests.
var FitOpenFiles = fitOpenFiles
