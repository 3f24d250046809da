package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// TestRedactSecrets: whatever a password holds ('/', '?', '#', '@', ':',
// '%', spaces), written escaped or not in the URL's user information, or
// escaped in its password parameter, neither it nor any part of it of 4
// bytes or more shows in Redact's output or in the error of a parse, an
// open, a read or an init (a server that refuses connections, a host
// that does not resolve, a URL that does not parse).
func TestRedactSecrets(t *testing.T) {
	// Letters rare in darrm's and the driver's messages, so that a part of
	// a password found in one is the password's, not a word's.
	const alphabet = "XZJKVWQxzjqkv/?#@:% &=+;"
	r := rand.New(rand.NewPCG(67, 6))
	bk := Options{StateDir: t.TempDir()}
	h := NewHeader(unique(bound), accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-5}}, 1e-6, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-5}}))
	n := 200
	if testing.Short() {
		n = 50
	}
	for range n {
		b := make([]byte, 6+r.IntN(20))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		pw := string(b)
		escaped := (&url.URL{Scheme: "postgres", User: url.UserPassword("u", pw), Host: "127.0.0.1:1", Path: "/db", RawQuery: "ledger=x"}).String()
		for _, u := range []string{
			escaped,
			"postgres://u:" + pw + "@127.0.0.1:1/db?ledger=x",
			"postgresql://u:" + pw + "@127.0.0.1:1,127.0.0.1:2/db?ledger=x&connect_timeout=1",
			"postgres://u@127.0.0.1:1/db?password=" + url.QueryEscape(pw) + "&ledger=x",
			"postgres://u@127.0.0.1:1/db?ledger=x&sslpassword=" + strings.ReplaceAll(url.QueryEscape(pw), "+", "%20"),
		} {
			said := map[string]string{"Redact": Redact(u)}
			if _, err := parsePG(u); err != nil {
				said["parse"] = err.Error()
			}
			if _, err := bk.forRun(ctx, u); err != nil {
				said["open"] = err.Error()
			}
			if _, err := bk.readOnly(ctx, u); err != nil {
				said["read"] = err.Error()
			}
			if _, err := bk.create(ctx, u, h, false); err != nil {
				said["init"] = err.Error()
			}
			for what, msg := range said {
				if part := secretIn(msg, pw); part != "" {
					t.Errorf("password %q in %q: %s shows %q: %s", pw, u, what, part, msg)
				}
			}
			if said["open"] == "" || said["init"] == "" {
				t.Errorf("%q: a ledger opened or made on a closed port", u)
			}
		}
	}
}

// secretIn returns the longest part of pw, of 4 bytes or more, that msg
// holds, written as it is or escaped; "" when there is none.
func secretIn(msg, pw string) string {
	for n := len(pw); n >= 4; n-- {
		for i := 0; i+n <= len(pw); i++ {
			p := pw[i : i+n]
			for _, form := range []string{p, url.QueryEscape(p), url.PathEscape(p)} {
				if len(form) >= 4 && strings.Contains(msg, form) {
					return form
				}
			}
		}
	}
	return ""
}

// TestRedactMalformed: a password written unescaped is masked up to the
// URL's last '@', whatever it holds; a URL without a password keeps its
// parts, and its password parameters are masked wherever they are.
func TestRedactMalformed(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u:ab/c?d#e@host/db?ledger=x", "postgres://u:***@host/db?ledger=x"},
		{"postgres://u:a@b@host:5432/db?ledger=x", "postgres://u:***@host:5432/db?ledger=x"},
		{"postgres://u:p w%zz@host/db?ledger=x", "postgres://u:***@host/db?ledger=x"},
		{"postgres://h/db?password=p&ledger=a@b", "postgres://h/db?password=***&ledger=a@b"},
		{"postgres://u@h/db?ledger=a", "postgres://u@h/db?ledger=a"},
		{"postgres://h/db?pass%77ord=p&ledger=x", "postgres://h/db?password=***&ledger=x"},
		// An '@' in a ledger's name may end a password: escaped, it is none.
		{"postgres://u@h:5432/db?ledger=a@b", "postgres://u@h:***@b"},
		{"postgres://u@h:5432/db?ledger=a%40b", "postgres://u@h:5432/db?ledger=a%40b"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// testPGQueryAsLibpq: the URL's parameters reach the server as libpq
// reads them: %20 is a space and '+' itself, in libpq's documented
// options=-c%20NAME%3DVALUE, and in any other parameter; but the
// search_path is darrm's, the catalog's, whatever the options say.
func testPGQueryAsLibpq(t *testing.T, db string) {
	sep := "?"
	if strings.Contains(db, "?") {
		sep = "&"
	}
	for _, c := range []struct{ query, show, want string }{
		{"options=-c%20work_mem%3D5MB", "work_mem", "5MB"},
		{"options=-c%20search_path%3Dfoo", "search_path", "pg_catalog, pg_temp"},
		{"options=-c%20application_name%3Dx%2By", "application_name", "x+y"},
		{"application_name=a+b%20c", "application_name", "a+b c"},
	} {
		p, err := parsePG(db + sep + c.query + "&ledger=x")
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		conn, err := p.connect(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		var got string
		err = conn.QueryRow(context.Background(), "SHOW "+c.show).Scan(&got)
		closeConn(conn)
		if err != nil || got != c.want {
			t.Errorf("%s: SHOW %s = %q, %v; want %q", c.query, c.show, got, err, c.want)
		}
	}
}

// TestPGOverrideNote: a parameter that overrides the URL's database,
// host, port or user (libpq's rule) is said in a note naming what the run
// uses, and the messages name the database and server in use; a URL
// whose parameters repeat it, or set none, has no note.
func TestPGOverrideNote(t *testing.T) {
	for _, c := range []struct{ location, want string }{
		{"postgres://u:pw@h1:5432/a?dbname=b&ledger=x", "dbname=b over the URL's a (libpq's rule): this run uses database b of the server at h1:5432 as user u"},
		{"postgres://u@h1/a?host=h2&port=6000&user=v&ledger=x", "host=h2 over the URL's h1, user=v over the URL's u (libpq's rule): this run uses database a of the server at h2:6000 as user v"},
		{"postgres://u@h1/a?dbname=a&ledger=x", ""},
		{"postgres://u@h1/a?ledger=x", ""},
	} {
		p, err := parsePG(c.location)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.overridden, c.want) || (c.want == "") != (p.overridden == "") {
			t.Errorf("%s: note %q, want %q", c.location, p.overridden, c.want)
		}
		if err := p.fail("connect", fmt.Errorf("dial: %w", syscall.ECONNREFUSED)); !strings.Contains(err.Error(), net.JoinHostPort(p.cfg.Host, strconv.Itoa(int(p.cfg.Port)))) {
			t.Errorf("%s: %v names another server than %s", c.location, err, p.cfg.Host)
		}
	}
}
