//go:build unix

package docstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckToolchainSaysSo: scripts/check-toolchain.sh, which the README
// has a new user run, says in one line what it found when the toolchain
// is ready, rather than nothing. It runs only where gcc already links
// the libraries, so that the script installs nothing.
func TestCheckToolchainSaysSo(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte("int main(void){return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("gcc", src, "-o", filepath.Join(dir, "p"), "-lstdc++", "-lz", "-lm", "-ldl").Run(); err != nil {
		t.Skipf("gcc does not link -lstdc++ -lz here (%v): the script would install them", err)
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "scripts", "check-toolchain.sh"))
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	out, err := cmd.Output()
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); err != nil || len(lines) != 1 || !strings.Contains(lines[0], "ready to build darrm") {
		t.Errorf("scripts/check-toolchain.sh: %v, stdout %q; want one line saying the toolchain is ready", err, out)
	}
}
