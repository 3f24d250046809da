package ledger

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// pgLocation is a PostgreSQL ledger's location, parsed.
type pgLocation struct {
	redacted string // the URL without its password (Redact)
	name     string // the ledger's name
	cfg      *pgx.ConnConfig
	secrets  []string // what messages must not show: the password
	// lockTimeout bounds each wait for a lock (Options.LockTimeout), the
	// session's lock_timeout; holder says who holds the lock that a wait
	// gave up on, asked on the connection in use.
	lockTimeout time.Duration
	holder      func() string
	// overridden, if not "", says that the URL's parameters override its
	// database, host, port or user, and what the run uses: a note.
	overridden string
}

// Redact returns location as darrm prints and records it: a file's path
// as it is, a PostgreSQL URL with its password, and any password or
// sslpassword parameter, replaced by ***. A password written unescaped
// may hold '/', '?', '#' or '@', so that no parse can tell where the
// user information ends: any '@' may end it, and everything from the
// user name's ':' to the URL's last '@' is masked (a URL whose path or
// parameters hold an '@' loses more than its password, never less).
func Redact(location string) string {
	if !IsURL(location) {
		return location
	}
	scheme, rest, _ := strings.Cut(location, "://")
	auth := ""
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if user, _, ok := strings.Cut(rest[:at], ":"); ok {
			auth, rest = user+":***@", rest[at+1:]
		}
	}
	if path, query, ok := strings.Cut(rest, "?"); ok {
		params := strings.Split(query, "&")
		for i, p := range params {
			k, _, _ := strings.Cut(p, "=")
			if k, err := url.QueryUnescape(k); err == nil && (k == "password" || k == "sslpassword") {
				params[i] = k + "=***"
			}
		}
		rest = path + "?" + strings.Join(params, "&")
	}
	return scheme + "://" + auth + rest
}

// HasPassword reports whether location is a PostgreSQL ledger's URL that
// holds a password, in its user information (or what may be one, however
// malformed) or in a password or sslpassword parameter: every user of
// the machine can read a command line while it runs (ps), and a shell
// keeps it in its history, where ~/.pgpass and PGPASSWORD are read by
// the driver and seen by no one else.
func HasPassword(location string) bool {
	return IsURL(location) && len(secretsOf(location, "")) > 0
}

// urlError is a PostgreSQL ledger's URL that names no ledger darrm can
// reach: the caller's input.
type urlError struct{ where, reason string }

func (e *urlError) Error() string  { return fmt.Sprintf("ledger %s: %s", e.where, e.reason) }
func (e *urlError) BadInput() bool { return true }

// parsePG parses a PostgreSQL ledger's location, a libpq URL with the
// ledger's name as its parameter ledger; PGPASSWORD, PGPASSFILE and
// libpq's other variables and parameters are pgx's.
func parsePG(location string) (*pgLocation, error) {
	where := Redact(location)
	secrets := secretsOf(location, "")
	bad := func(format string, args ...any) error {
		return &urlError{where, scrubf(secrets, format, args...)}
	}
	const form = "postgres://[user[:password]@]host[:port]/database?ledger=NAME"
	base, query, _ := strings.Cut(location, "?")
	query, _, _ = strings.Cut(query, "#")
	// The driver's parameters go to it as written, for it to decode as
	// libpq does ('+' is itself, %20 a space); the ledger's name is
	// darrm's, decoded as a form's.
	var names, params []string
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != "ledger" {
			if kv != "" {
				params = append(params, kv)
			}
			continue
		}
		name, err := url.QueryUnescape(v)
		if err != nil {
			return nil, bad("its parameter ledger=%s is not escaped as a URL's (%v): the form is "+form, v, err)
		}
		names = append(names, name)
	}
	switch {
	case len(names) == 0:
		return nil, bad("names no ledger: add ?ledger=NAME to the URL, the ledger's name in the database (the form is " + form + ")")
	case len(names) > 1:
		return nil, bad("names %d ledgers (ledger=%s): give one", len(names), strings.Join(names, ", ledger="))
	}
	name := names[0]
	switch {
	case name == "":
		return nil, bad("ledger= is empty: name the ledger")
	case len(name) > maxNameBytes:
		return nil, bad("the ledger's name has %d bytes: at most %d", len(name), maxNameBytes)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return nil, bad("the ledger's name %q has control characters: they are not allowed", name)
	}
	conn := base
	if len(params) > 0 {
		conn += "?" + strings.Join(params, "&")
	}
	cfg, err := pgx.ParseConfig(conn)
	if err != nil {
		return nil, bad("%v (the form is "+form+")", err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok && !strings.Contains(cfg.RuntimeParams["options"], "application_name") {
		cfg.RuntimeParams["application_name"] = "darrm"
	}
	// darrm's statements name its tables by their schema, and every
	// function and operator they call is the catalog's: a search_path of
	// the server's default ("$user", public) would let whoever can make a
	// schema named for the user, or write public, put a function of the
	// same name and a closer type first (to_jsonb(darrm.ledgers)), which
	// would run as the user, a superuser or an analyst, and could settle
	// the analyst's run. It outranks the URL's options, as lock_timeout
	// does.
	cfg.RuntimeParams["search_path"] = "pg_catalog, pg_temp"
	// A server that goes away without a word (a cable pulled, a machine
	// down) is noticed within seconds, not the system's two hours.
	d := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: time.Second, Count: 3}}
	cfg.DialFunc = d.DialContext
	preferOnOneConnection(cfg)
	p := &pgLocation{redacted: where, name: name, cfg: cfg, secrets: secretsOf(location, cfg.Password)}
	p.overridden = p.overrides(base, params)
	return p, nil
}

// overrides says, when the parameters params override what the URL base
// says before them (libpq's rule, which darrm keeps: dbname=, host=,
// port=, user= win), what the run uses, for a note: "" when none does.
func (p *pgLocation) overrides(base string, params []string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	said := map[string]string{"dbname": strings.TrimPrefix(u.Path, "/"), "host": u.Hostname(), "port": u.Port(), "user": u.User.Username()}
	var over []string
	for _, kv := range params {
		k, v, _ := strings.Cut(kv, "=")
		if was, ok := said[k]; ok && was != "" {
			if v, err := url.PathUnescape(v); err == nil && v != was {
				over = append(over, fmt.Sprintf("%s=%s over the URL's %s", k, v, was))
			}
		}
	}
	if len(over) == 0 {
		return ""
	}
	return p.sayf("its parameters set %s (libpq's rule): this run uses database %s of %s as user %s", strings.Join(over, ", "), p.cfg.Database, p.server(), p.cfg.User)
}

// withLedger returns the PostgreSQL ledger location with its ledger
// parameter naming the ledger name instead, its other parameters as they
// are.
func withLedger(location, name string) string {
	base, query, _ := strings.Cut(location, "?")
	query, _, _ = strings.Cut(query, "#")
	var kept []string
	for _, p := range strings.Split(query, "&") {
		if k, _, _ := strings.Cut(p, "="); p != "" && k != "ledger" {
			kept = append(kept, p)
		}
	}
	return base + "?" + strings.Join(append(kept, "ledger="+url.QueryEscape(name)), "&")
}

// secretsOf returns what messages about location must not show: the
// password in use, and whatever its URL may hold as one, as written and
// escaped: the text that Redact masks in its user information (however
// malformed) and its password and sslpassword parameters.
func secretsOf(location, password string) []string {
	var s []string
	add := func(p string) {
		if p != "" {
			s = append(s, p, url.QueryEscape(p), url.PathEscape(p))
			if u, err := url.PathUnescape(p); err == nil && u != p {
				s = append(s, u)
			}
			if u, err := url.QueryUnescape(p); err == nil && u != p {
				s = append(s, u)
			}
		}
	}
	add(password)
	_, rest, _ := strings.Cut(location, "://")
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if _, p, ok := strings.Cut(rest[:at], ":"); ok {
			add(p)
			rest = rest[at+1:]
		}
	}
	if u, err := url.Parse(location); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	if _, query, ok := strings.Cut(rest, "?"); ok {
		for _, p := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(p, "=")
			if k, err := url.QueryUnescape(k); err == nil && (k == "password" || k == "sslpassword") {
				add(v)
			}
		}
	}
	return s
}

// minSecret is the length of the shortest part of a secret that
// messages mask: a driver's message may quote a piece of a malformed URL
// (a port, a host) cut out of a password.
const minSecret = 4

// redact removes the location's secrets from a message: every run of
// minSecret bytes or more that is part of one.
func (p *pgLocation) redact(msg string) string {
	return scrub(msg, p.secrets)
}

// sayf formats a message about the location whose arguments may hold its
// secrets (scrubf).
func (p *pgLocation) sayf(format string, args ...any) string {
	return scrubf(p.secrets, format, args...)
}

// scrubf formats a message whose string and error arguments are scrubbed
// of secrets: darrm's own words, which a secret may share a part with,
// stay whole.
func scrubf(secrets []string, format string, args ...any) string {
	args = slices.Clone(args)
	for i, a := range args {
		switch a := a.(type) {
		case string:
			args[i] = scrub(a, secrets)
		case error:
			args[i] = scrub(a.Error(), secrets)
		}
	}
	return fmt.Sprintf(format, args...)
}

// scrub replaces by *** every run of msg that is minSecret bytes or more
// of one of secrets (all of a shorter secret).
func scrub(msg string, secrets []string) string {
	hide := make([]bool, len(msg))
	found := false
	for _, s := range secrets {
		n := min(minSecret, len(s))
		for i := 0; i+n <= len(msg); i++ {
			for j := 0; j+n <= len(s); j++ {
				k := 0
				for i+k < len(msg) && j+k < len(s) && msg[i+k] == s[j+k] {
					k++
				}
				if k >= n {
					for m := i; m < i+k; m++ {
						hide[m] = true
					}
					found = true
				}
			}
		}
	}
	if !found {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		if !hide[i] {
			b.WriteByte(msg[i])
			continue
		}
		b.WriteString("***")
		for i+1 < len(msg) && hide[i+1] {
			i++
		}
	}
	return b.String()
}

// withPassword returns recorded, a PostgreSQL ledger's location as a
// record keeps it (Redact: its password ***), as a run connects to it:
// with the password of current, the location of a command on the same
// server as the same user, or else without one, for the driver to find
// in PGPASSWORD or the password file. Any other location is returned as
// it is.
func withPassword(recorded, current string) string {
	if !IsURL(recorded) || !strings.Contains(recorded, "***") {
		return recorded
	}
	scheme, rest, _ := strings.Cut(recorded, "://")
	user := ""
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if u, p, ok := strings.Cut(rest[:at], ":"); ok && p == "***" {
			user, rest = u, rest[at+1:]
		}
	}
	if path, query, ok := strings.Cut(rest, "?"); ok {
		var kept []string
		for _, p := range strings.Split(query, "&") {
			if k, v, _ := strings.Cut(p, "="); v != "***" || k != "password" && k != "sslpassword" {
				kept = append(kept, p)
			}
		}
		rest = path + "?" + strings.Join(kept, "&")
	}
	auth := ""
	if user != "" {
		auth = user + "@"
	}
	bare := scheme + "://" + auth + rest
	if !IsURL(current) {
		return bare
	}
	r, errR := parsePG(bare)
	c, errC := parsePG(current)
	if errR != nil || errC != nil || c.cfg.Password == "" || r.cfg.Host != c.cfg.Host || r.cfg.Port != c.cfg.Port || r.cfg.User != c.cfg.User {
		return bare
	}
	escaped := strings.TrimPrefix(url.UserPassword("", c.cfg.Password).String(), ":")
	return scheme + "://" + user + ":" + escaped + "@" + rest
}
