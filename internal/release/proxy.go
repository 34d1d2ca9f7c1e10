package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// WriteProxy writes, under dir, a file-system module proxy that serves every
// released module of the tree at its version, as if its tag had been pushed:
// use it as GOPROXY=file://<dir>. Each zip holds the files of the working
// tree that a commit would hold (see ZipFiles); modzip.Create refuses the
// same files the go command would.
func WriteProxy(r *Repo, dir string) error {
	now := time.Now().UTC().Truncate(time.Second)
	for _, m := range r.Released() {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		v := module.Version{Path: m.Path, Version: m.Version}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		zf, err := os.Create(filepath.Join(vdir, m.Version+".zip"))
		if err != nil {
			return err
		}
		if err := modzip.Create(zf, v, r.ZipFiles(m)); err != nil {
			zf.Close()
			return fmt.Errorf("zip of %s: %w", v, err)
		}
		if err := zf.Close(); err != nil {
			return err
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{m.Version, now})
		if err != nil {
			return err
		}
		for name, data := range map[string][]byte{
			m.Version + ".mod":  m.GoModData,
			m.Version + ".info": info,
			"list":              []byte(m.Version + "\n"),
		} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// TryEnv is the environment in which the go command fetches the release
// from the proxy WriteProxy wrote to dir, on any machine, an empty module
// cache included: GOPROXY names the tree's proxy first and then goproxy
// (the machine's own, `go env GOPROXY`), since the tree's proxy holds only
// this repository's modules and their dependencies come from the default
// proxy; GONOSUMDB keeps the checksum database, which has never seen these
// versions, out of this repository's modules. A goproxy of "off" or ""
// leaves the tree's proxy alone.
func TryEnv(r *Repo, dir, goproxy string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	u := filepath.ToSlash(abs)
	if !strings.HasPrefix(u, "/") {
		u = "/" + u // file:///C:/... on Windows
	}
	proxies := "file://" + u
	if goproxy = strings.TrimSpace(goproxy); goproxy != "" && goproxy != "off" {
		proxies += "," + goproxy
	}
	return []string{"GOPROXY=" + proxies, "GONOSUMDB=" + r.Modules[0].Path}, nil
}
