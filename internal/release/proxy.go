package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
