package memstore

// LogSize is logSize, for the tests that outrun the log.
const LogSize = logSize
