package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	redisstore "github.com/petinventory/petinventory/storage/redis"
)

// A record of the store carrying an "option" gets the server's settings
// that feed it; one without, or with an option no setting feeds, is left
// as it is; an "option" given through With is seen too.
func TestWithSettingNames(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(WithSettingNames(slog.NewTextHandler(&buf, nil)))
	for _, tc := range []struct {
		option, want string
	}{
		{redisstore.OptionURL, `setting=REDIS_URL`},
		{redisstore.OptionTLSFiles, `setting="INVENTORY_REDIS_CA_FILE, INVENTORY_REDIS_CERT_FILE, INVENTORY_REDIS_KEY_FILE"`},
		{redisstore.OptionPasswordFile, `setting=INVENTORY_REDIS_PASSWORD_FILE`},
		{redisstore.OptionEviction, `setting="INVENTORY_REDIS_ALLOW_EVICTION / -redis-allow-eviction"`},
		{redisstore.OptionInitialize, `setting="INVENTORY_SEED / -seed"`},
	} {
		buf.Reset()
		log.Error("redisstore: configuration fault", "fault", "x", "option", tc.option, "file", "", "command", "")
		if got := buf.String(); !strings.Contains(got, tc.want) || strings.Count(got, "setting=") != 1 {
			t.Errorf("option %s logged as %q, want one %s", tc.option, got, tc.want)
		}
		buf.Reset()
		log.With("fault", "x", "option", tc.option).Error("redisstore: configuration fault")
		if got := buf.String(); !strings.Contains(got, tc.want) || strings.Count(got, "setting=") != 1 {
			t.Errorf("option %s given through With logged as %q, want one %s", tc.option, got, tc.want)
		}
	}
	for _, attrs := range [][]any{{"option", ""}, {"option", "WithLogger"}, {"error", "URL"}, nil} {
		buf.Reset()
		log.Error("something", attrs...)
		if strings.Contains(buf.String(), "setting=") {
			t.Errorf("%v logged as %q, want no setting", attrs, buf.String())
		}
	}
	// Under a group, the setting goes with the option.
	buf.Reset()
	log.WithGroup("store").Error("fault", "option", "URL")
	if got := buf.String(); !strings.Contains(got, "store.option=URL store.setting=REDIS_URL") {
		t.Errorf("in a group: %q, want store.setting next to store.option", got)
	}
}

// A TLS fault names the file that fixes it, in the log and in /readyz:
// the CA file for a server certificate the client does not trust, the
// certificate and key files for a client certificate the server wants.
func TestTLSFaultNamesItsFile(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(WithSettingNames(slog.NewTextHandler(&buf, nil)))
	for _, tc := range []struct {
		kind, want, not string
	}{
		{"tls-verify", "setting=INVENTORY_REDIS_CA_FILE", "CERT_FILE"},
		{"tls-client-certificate", `setting="INVENTORY_REDIS_CERT_FILE, INVENTORY_REDIS_KEY_FILE"`, "CA_FILE"},
	} {
		buf.Reset()
		log.Error("redisstore: configuration fault", "fault", tc.kind, "option", redisstore.OptionTLSFiles)
		if got := buf.String(); !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%s logged as %q, want %s and no %s", tc.kind, got, tc.want, tc.not)
		}
		f := &redisstore.ConfigFault{Kind: tc.kind, Op: "ready", Option: redisstore.OptionTLSFiles, Fix: "give the right file", Err: errors.New("x509")}
		msg := notReadyMessage(fmt.Errorf("wrapped: %w", f))
		if !strings.Contains(msg, "give the right file") || !strings.Contains(msg, strings.Trim(strings.TrimPrefix(tc.want, "setting="), `"`)) || strings.Contains(msg, tc.not) {
			t.Errorf("/readyz for %s says %q, want the fix and %s, without %s", tc.kind, msg, tc.want, tc.not)
		}
	}
	// TLS to a plain port is fixed in the URL or by dropping the TLS files.
	buf.Reset()
	log.Error("redisstore: configuration fault", "fault", "tls-to-plain-port", "option", "URL")
	if got := buf.String(); !strings.Contains(got, `setting="REDIS_URL, INVENTORY_REDIS_CA_FILE, INVENTORY_REDIS_CERT_FILE, INVENTORY_REDIS_KEY_FILE"`) {
		t.Errorf("tls-to-plain-port logged as %q, want REDIS_URL and the TLS files", got)
	}
	// The TLS files as the fault's own option are named once each.
	buf.Reset()
	log.Error("redisstore: configuration fault", "fault", "tls-to-plain-port", "option", redisstore.OptionTLSFiles)
	if got := buf.String(); !strings.Contains(got, `setting="INVENTORY_REDIS_CA_FILE, INVENTORY_REDIS_CERT_FILE, INVENTORY_REDIS_KEY_FILE"`) {
		t.Errorf("tls-to-plain-port with the TLS files as its option logged as %q, want the TLS files once each", got)
	}
	// A fault fixed on the Redis side names no setting.
	msg := notReadyMessage(&redisstore.ConfigFault{Kind: "acl", Op: "ready", Command: "xadd", Fix: "grant xadd", Err: errors.New("NOPERM")})
	if strings.Contains(msg, "inventory-server:") || !strings.Contains(msg, "grant xadd") {
		t.Errorf("/readyz for an ACL fault says %q, want its fix and no setting", msg)
	}
}

// TestFaultTextNamesSettings: the store words a fault's fix in the
// settings (settingWords, the hook Run gives it), not its Go API: the TLS
// file that fixes the fault, the seed for a store not initialized; and in
// the server's log a certificate the client does not trust names the CA
// file in use.
func TestFaultTextNamesSettings(t *testing.T) {
	for _, tc := range []struct {
		option, kind, want string
	}{
		{redisstore.OptionURL, redisstore.FaultPlainToTLSPort, "REDIS_URL"},
		{redisstore.OptionTLSFiles, redisstore.FaultTLSVerify, "INVENTORY_REDIS_CA_FILE"},
		{redisstore.OptionTLSFiles, redisstore.FaultTLSClientCertificate, "INVENTORY_REDIS_CERT_FILE and INVENTORY_REDIS_KEY_FILE"},
		{redisstore.OptionTLSFiles, redisstore.FaultTLSToPlainPort, "INVENTORY_REDIS_CA_FILE and INVENTORY_REDIS_CERT_FILE and INVENTORY_REDIS_KEY_FILE"},
		{redisstore.OptionPasswordFile, "credentials", "INVENTORY_REDIS_PASSWORD_FILE"},
		{redisstore.OptionEviction, "eviction-policy", "-redis-allow-eviction"},
		{redisstore.OptionInitialize, redisstore.FaultVanished, "inventory-server -init-only -seed FILE (or -seed demo, or -seed empty), run once"},
		{"WithLogger", "", ""},
	} {
		if got := settingWords(tc.option, tc.kind); got != tc.want {
			t.Errorf("settingWords(%s, %s) = %q, want %q", tc.option, tc.kind, got, tc.want)
		}
	}
	var buf bytes.Buffer
	log := slog.New(withCAFile(NewLogger(&buf).Handler(), "/etc/inventory/ca.pem"))
	log.Error("redisstore: configuration fault: TLS: give the CA that signed it to INVENTORY_REDIS_CA_FILE", "fault", redisstore.FaultTLSVerify, "option", redisstore.OptionTLSFiles)
	if got := buf.String(); !strings.Contains(got, "ca_file=/etc/inventory/ca.pem") || !strings.Contains(got, "setting=INVENTORY_REDIS_CA_FILE") {
		t.Errorf("tls-verify logged as %q, want the CA file in use and the setting", got)
	}
	buf.Reset()
	slog.New(withCAFile(slog.NewTextHandler(&buf, nil), "")).Error("x", "fault", redisstore.FaultTLSVerify, "option", redisstore.OptionTLSFiles)
	if !strings.Contains(buf.String(), `ca_file="none: the system's trust store"`) {
		t.Errorf("without a CA file: %q", buf.String())
	}
}
