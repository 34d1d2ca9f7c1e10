package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
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
		{"URL", `setting=REDIS_URL`},
		{"Config.LoadTLSFiles", `setting="INVENTORY_REDIS_CA_FILE, INVENTORY_REDIS_CERT_FILE, INVENTORY_REDIS_KEY_FILE"`},
		{"Config.UsePasswordFile", `setting=INVENTORY_REDIS_PASSWORD_FILE`},
		{"WithEvictionAllowed", `setting="INVENTORY_REDIS_ALLOW_EVICTION / -redis-allow-eviction"`},
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
