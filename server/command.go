package server

import (
	"errors"
	"flag"
	"io"
	"log/slog"
)

// Exit statuses of the command: ExitStatus returns them.
const (
	ExitOK     = 0 // a graceful shutdown (SIGINT, SIGTERM), -h or -version
	ExitServe  = 1 // serving failed (the address is taken, for example)
	ExitConfig = 2 // the settings are wrong, as the flag package's own status for a bad flag
)

// NewLogger is the command's logger: text lines on w, with the server's
// setting names added to the store's configuration faults
// (WithSettingNames).
func NewLogger(w io.Writer) *slog.Logger {
	return slog.New(WithSettingNames(slog.NewTextHandler(w, nil)))
}

// ExitStatus logs err, as returned by Parse or Run, and returns the
// command's exit status: ExitOK for nil, flag.ErrHelp or ErrVersion, ExitConfig for a
// ConfigError, ExitServe otherwise.
func ExitStatus(log *slog.Logger, err error) int {
	var ce ConfigError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp) || errors.Is(err, ErrVersion):
		return ExitOK
	case errors.As(err, &ce):
		log.Error("invalid configuration", "error", err)
		return ExitConfig
	default:
		log.Error("inventory server stopped", "error", err)
		return ExitServe
	}
}
