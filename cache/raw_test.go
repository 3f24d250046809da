package cache

import (
	"encoding/json"
	"os"
	"testing"
)

// writeRaw stores e with a correct checksum but none of Put's checks.
func writeRaw(t *testing.T, d *Dir, k Key, e *Entry) {
	t.Helper()
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(stored{Entry: raw, Checksum: checksum(raw)})
	if err := os.WriteFile(d.Path(k), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
