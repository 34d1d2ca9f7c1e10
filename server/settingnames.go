package server

import (
	"context"
	"log/slog"
	"strings"

	redisstore "github.com/petinventory/petinventory/storage/redis"
)

// The store (redisstore) logs each configuration fault once, at ERROR,
// naming in an "option" attribute the Go API that fixes it ("URL",
// "Config.LoadTLSFiles", "Config.UsePasswordFile", "WithEvictionAllowed",
// "Store.Initialize"): an operator of this server sets none of those, but
// a setting that feeds them. So the store words its fixes in this server's
// settings (settingWords, given to it with redisstore.WithSettingNames),
// and WithSettingNames adds, to a record carrying an "option", a "setting"
// attribute naming those settings, from the settings table.

// WithSettingNames wraps h so that a record with an "option" attribute
// also has a "setting" attribute naming the server's settings that set
// that option (REDIS_URL for "URL", for example). Other records pass
// unchanged. The message itself is the store's, which Run has word its
// fixes in the settings' names.
// NewLogger uses it; wrap your own handler with it when you give Run
// another logger.
func WithSettingNames(h slog.Handler) slog.Handler {
	if sn, ok := h.(settingNames); ok {
		return sn
	}
	return settingNames{h: h}
}

// settingNames is WithSettingNames's handler. caFile, when set, is the CA
// file in use (Config.RedisCAFile, or what stands for the system's trust
// store), added to a record of a certificate the client does not trust.
type settingNames struct {
	h      slog.Handler
	caFile string
}

// withCAFile returns h's settingNames (wrapping it when it is not one)
// that names caFile in a tls-verify fault: the store's logger in Run.
func withCAFile(h slog.Handler, caFile string) slog.Handler {
	sn, ok := h.(settingNames)
	if !ok {
		sn = settingNames{h: h}
	}
	if caFile == "" {
		caFile = "none: the system's trust store"
	}
	sn.caFile = caFile
	return sn
}

func (s settingNames) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

func (s settingNames) Handle(ctx context.Context, r slog.Record) error {
	option, kind := "", ""
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "option":
			option = a.Value.String()
		case "fault":
			kind = a.Value.String()
		}
		return true
	})
	names := settingsFor(option, kind)
	if names == "" {
		return s.h.Handle(ctx, r)
	}
	r = r.Clone()
	r.AddAttrs(slog.String("setting", names))
	if kind == redisstore.FaultTLSVerify && s.caFile != "" {
		r.AddAttrs(slog.String("ca_file", s.caFile))
	}
	return s.h.Handle(ctx, r)
}

// seedWords is what a fix says to initialize the store: an operator's
// explicit act, run once, that exits (a server's -seed acts at its start
// only, and a store that vanished under running servers needs no
// restart of them).
const seedWords = "inventory-server -init-only -seed FILE (or -seed demo, or -seed empty), run once"

// optionInitialize is the store's name of the Go API that initializes it
// (the "option" of an initialization fault), which seedWords words.
const optionInitialize = "Store.Initialize"

// settingWords is the hook the store words its fixes with
// (redisstore.WithSettingNames): what this server calls the store's Go API
// option in a fault of kind. The settings that feed the option and may
// fix such a fault, joined with "and" (INVENTORY_REDIS_CA_FILE for a
// certificate the client does not trust, REDIS_URL for the URL), or how
// to initialize the store; "" (the store's own name) for an option no
// setting feeds.
func settingWords(option, kind string) string {
	if option == optionInitialize {
		return seedWords
	}
	var names []string
	for _, s := range settings {
		if s.option == option && tlsFileFixes(s.env, kind) {
			names = append(names, s.name())
		}
	}
	return strings.Join(names, " and ")
}

func (s settingNames) WithAttrs(as []slog.Attr) slog.Handler {
	for _, a := range as {
		if names := settingsFor(a.Value.String(), ""); a.Key == "option" && names != "" {
			as = append(as[:len(as):len(as)], slog.String("setting", names))
			break
		}
	}
	return settingNames{s.h.WithAttrs(as), s.caFile}
}

func (s settingNames) WithGroup(name string) slog.Handler {
	return settingNames{s.h.WithGroup(name), s.caFile}
}

// settingsFor names the settings that feed option, comma-separated: the
// environment variable, and the flag too when there is one. It is empty
// for an option no setting feeds. A fault's kind narrows the TLS files to
// the one that fixes it: the CA file for a certificate the client does not
// trust, the certificate and key files for one the server asks for.
func settingsFor(option, kind string) string {
	if option == "" {
		return ""
	}
	var names []string
	for _, s := range settings {
		if !(s.option == option || tlsOnFixes(s.option, kind)) || !tlsFileFixes(s.env, kind) {
			continue
		}
		name := s.env
		if s.flag != "" {
			name += " / -" + s.flag
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

// tlsOnFixes reports whether a setting of option may fix a fault of kind
// besides the fault's own option: TLS spoken to a plain port is fixed in
// the URL (redis://), but the TLS files turn TLS on as rediss:// does, so
// they are named too.
func tlsOnFixes(option, kind string) bool {
	return kind == redisstore.FaultTLSToPlainPort && option == "Config.LoadTLSFiles"
}

// tlsFileFixes reports whether the setting env may fix a fault of kind:
// every setting does, except the TLS files that the kind does not concern.
func tlsFileFixes(env, kind string) bool {
	switch kind {
	case redisstore.FaultTLSVerify, redisstore.FaultPlainToTLSPort:
		return env != "INVENTORY_REDIS_CERT_FILE" && env != "INVENTORY_REDIS_KEY_FILE"
	case redisstore.FaultTLSClientCertificate:
		return env != "INVENTORY_REDIS_CA_FILE"
	}
	return true
}
