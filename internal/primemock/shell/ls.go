package shell

// ls and the mode strings it prints.

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// modeString is ls -l's mode column.
func modeString(fi sandboxfs.FileInfo) string {
	b := []byte("----------")
	switch fi.Type {
	case "dir":
		b[0] = 'd'
	case "symlink":
		b[0] = 'l'
	case "device":
		b[0] = 'c'
	}
	const rwx = "rwxrwxrwx"
	for i := range len(rwx) {
		if fi.Mode&(1<<(8-i)) != 0 {
			b[i+1] = rwx[i]
		}
	}
	if fi.Mode&fs.ModeSticky != 0 {
		if b[9] == 'x' {
			b[9] = 't'
		} else {
			b[9] = 'T'
		}
	}
	return string(b)
}

func (in *interp) ls(_ int, args []string) int {
	o, bad := getopt(args, "alAd1hF", "", map[string]byte{"all": 'a', "almost-all": 'A', "directory": 'd'})
	if bad != "" {
		in.badOption("ls", bad)
		return 2
	}
	ops := o.operands
	if len(ops) == 0 {
		ops = []string{"."}
	}
	code := 0
	line := func(name string, fi sandboxfs.FileInfo) {
		if !o.has('l') {
			in.write(1, name+"\n")
			return
		}
		size := fi.Size
		if fi.IsDir() {
			size = 4096
		}
		s := fmt.Sprintf("%s 1 root root %d %s %s", modeString(fi), size, fi.ModTime.Format("Jan _2 15:04"), name)
		if fi.Type == "symlink" {
			s += " -> " + fi.Target
		}
		in.write(1, s+"\n")
	}
	var files []string
	var dirs []string
	infos := map[string]sandboxfs.FileInfo{}
	for _, name := range ops {
		fi, err := in.m.fs.Stat(in.abs(name), !o.has('l') && !o.has('d'))
		if err == nil && fi.Type == "symlink" && !o.has('d') {
			if t, terr := in.m.fs.Stat(in.abs(name), true); terr == nil && t.IsDir() {
				fi = t // ls -l DIRLINK lists the directory it names
			}
		}
		if err != nil {
			in.errorf("ls: cannot access '%s': %v\n", name, err)
			code = 2
			continue
		}
		infos[name] = fi
		if fi.IsDir() && !o.has('d') {
			dirs = append(dirs, name)
		} else {
			files = append(files, name)
		}
	}
	for _, name := range files {
		line(name, infos[name])
	}
	for i, d := range dirs {
		if len(ops) > 1 {
			if i > 0 || len(files) > 0 {
				in.write(1, "\n")
			}
			in.write(1, d+":\n")
		}
		entries, err := in.m.fs.ReadDir(in.abs(d))
		if err != nil {
			in.errorf("ls: cannot open directory '%s': %v\n", d, err)
			code = 2
			continue
		}
		if o.has('a') {
			self := infos[d]
			self.Name = "."
			entries = append([]sandboxfs.FileInfo{self, {Name: "..", Type: "dir", Mode: 0o755, ModTime: self.ModTime}}, entries...)
		} else if !o.has('A') {
			kept := entries[:0]
			for _, e := range entries {
				if !strings.HasPrefix(e.Name, ".") {
					kept = append(kept, e)
				}
			}
			entries = kept
		}
		if o.has('l') {
			var blocks int64
			for _, e := range entries {
				blocks += (e.Size + 4095) / 4096 * 4
				if e.IsDir() {
					blocks += 4
				}
			}
			in.write(1, fmt.Sprintf("total %d\n", blocks))
		}
		for _, e := range entries {
			line(e.Name, e)
		}
	}
	return code
}
