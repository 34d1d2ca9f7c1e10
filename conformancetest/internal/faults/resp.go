package faults

import "github.com/petinventory/petinventory/conformancetest/internal/resp"

// Conn is a connection of the faults to a Redis server: the repository's
// RESP client (internal/resp, copied into this module as
// conformancetest/internal/resp), which the test rigs use too.
type Conn = resp.Conn
