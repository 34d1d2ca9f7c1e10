package managed

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeFile writes content to a new file of the test's and returns its
// path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPasswordRotation: the app reads its Redis password from a file.
// The provider rotates it (ACL SETUSER with the new password only), the
// file is updated, the old connections are closed (CLIENT KILL): updates
// succeed again within seconds, without a restart, and nothing is logged
// at ERROR.
func TestPasswordRotation(t *testing.T) {
	t.Parallel()
	r := startManaged(t, nil, nil, nil)
	pw := writeFile(t, "password", appPassword+"\n")
	a := startApp(t, []string{"REDIS_URL=" + r.url(""), "INVENTORY_REDIS_CA_FILE=" + r.files.CA, "INVENTORY_REDIS_PASSWORD_FILE=" + pw})
	a.waitReadyz(http.StatusOK, 20*time.Second)
	a.waitFor(5*time.Second, "serving", a.serves)

	const rotated = "app-pw-rotated-1d7f"
	r.do("ACL", "SETUSER", "app", "resetpass", ">"+rotated)
	// The file is replaced the way a secret mount does it: a new file
	// renamed over the old one.
	tmp := pw + ".new"
	if err := os.WriteFile(tmp, []byte(rotated+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, pw); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	r.do("CLIENT", "KILL", "USER", "app")
	a.waitFor(10*time.Second, "updates after the rotation", func() string {
		if got := a.patch(2, 9); got.Status != http.StatusOK {
			return string(got.Body)
		}
		return ""
	})
	t.Logf("updates succeed %v after the old connections were closed", time.Since(killed).Round(time.Millisecond))
	if errs := a.errorLines(); len(errs) > 0 {
		t.Errorf("the rotation logged ERRORs: %q", errs)
	}
	if got := a.get("/readyz"); got.Status != http.StatusOK {
		t.Errorf("/readyz after the rotation = %d %s", got.Status, got.Body)
	}
}
