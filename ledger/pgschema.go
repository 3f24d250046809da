package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A ledger in PostgreSQL is the rows of one database's schema darrm: a
// row of darrm.ledgers per ledger (its name, the identity and ensemble
// its header states, whether it is retired, the role that made it, and
// its head: the number of its lines, their bytes and the hash of the
// last), and a row of darrm.lines per line, holding the line exactly as
// a ledger file holds it, with its number, the byte just past it in the
// file form and the role that wrote it. tablesSQL and guardSQL make them, and the
// guards that hold whoever writes, short of a superuser or of the
// tables' owner in a database without darrm's guard against DDL
// (guardDDLSQL):
//   - a line row is only appended (append_only), and only as the line
//     after the head, whose hash it names as its prev; appending it moves
//     the head on (append_line), so that an analyst needs no UPDATE on
//     any table;
//   - a line is one that darrm writes, or it never becomes the head: its
//     layout, kind and hash are checked, a spend line's run and counts,
//     and what the lines of a run may say (chain.follows), and its JSON
//     is one that darrm reads as the database does (each key once, in
//     lowercase but in the header, a spend's or an end's keys and the
//     types of their values darrm's own: bad_key), so that a
//     malformed line cannot stop every release nor say one thing to the
//     database and another to darrm;
//   - a line belongs to the database user (session_user) that writes it:
//     a spend line names it as its analyst, the lines of a run after its
//     first are its analyst's alone, so that no one settles (lowers)
//     another's run, and only the role that made a ledger retires it,
//     naming itself;
//   - a ledger's first line is the header of the identity and ensemble
//     its row states;
//   - at most one ledger of an ensemble is live (ledgers_live, a unique
//     index), and an identity is never used twice (a unique key): a copy
//     imported again or a second ledger made for an ensemble is refused;
//   - a ledger row is never renamed, given another identity or maker,
//     reopened once retired, moved back or deleted, and only its lines
//     move its head, to the line appended (guard_ledger, check_head): one
//     ledger cannot be swapped for another. Retiring is a line (an end
//     line, Ledger.end), which sets the row's retired.
// The lines of a ledger made in the same transaction (ledger init, ledger
// import: its row's made_in) are the maker's, whoever they name: an
// import copies every analyst's lines.

// schemaVersion is the version of the schema darrm keeps ledgers in; a
// database of a later one is refused (a newer darrm made it), one of an
// earlier one is upgraded by the first run of its owner (upgradeSchema).
// Version 4 pins every function of the schema to the catalog's names
// (search_path), which version 3's guard_ledger took from its caller's,
// and refuses a line whose JSON darrm would read otherwise than the
// database does (darrm.bad_key). Version 5 refuses a line that holds a
// line break or a number that Go reads as 0 and the database does not,
// and comes with the guard against DDL of this darrm (guardTag), made
// once the schema has nothing of the tables' owner's own (cleanSQL).
// Version 6 refuses a line whose charge has a quantity below 0 (a cost,
// spendShape), which darrm refuses to read.
const schemaVersion = 6

// spendShape and endShape are the JSON of a spend line and of an end
// line as darrm writes it (Spend, ending): each key's path (its parents'
// keys, * for an element of an array) and what its value is, a JSON
// type, a count (a Go int: a plain non-negative integer), a number that
// Go decodes as a float64, a cost (such a number, at least 0: each
// quantity of a charge, which no step has below 0), or a time as Go
// writes it (RFC 3339). The
// database refuses any other key and any value of another type (null
// aside, which Go reads as nothing), so that a line it takes is one
// darrm decodes. A field added to Spend or ending needs a new schema
// version (TestSchemaShapeIsSpends).
var (
	spendShape = map[string]string{
		"analyst": "string", "bits": "array", "bits.*": "object", "bits.*.p": "number", "bits.*.q": "number", "bits_at": "object",
		"bits_at.end": "count", "bits_at.line": "count", "bits_sha256": "string", "charge": "object", "charge.advanced": "object",
		"charge.advanced.delta": "cost", "charge.advanced.eps": "cost", "charge.delta": "cost", "charge.eps": "cost",
		"charge.gdp_delta": "cost", "charge.gdp_mu2": "cost", "charge.point": "object", "charge.point.delta": "cost",
		"charge.point.eps": "cost", "charge.rdp": "cost", "charge.rho": "cost", "delta": "number", "discrete": "boolean",
		"eps": "number", "filter_parts": "array", "filter_parts.*": "object", "filter_parts.*.delta": "number",
		"filter_parts.*.filter": "string", "filter_parts.*.order": "number", "filter_parts.*.slack": "number", "final": "boolean",
		"gaussian": "array", "gaussian.*": "object", "gaussian.*.coords": "count", "gaussian.*.sigma": "number", "kind": "string",
		"laplace": "object", "laplace.coords": "count", "laplace.scale": "number", "mechanism": "string", "prior": "object",
		"prior.advanced_delta": "number", "prior.advanced_eps_sq": "number", "prior.curveless": "count", "prior.gdp_delta": "number",
		"prior.gdp_less": "count", "prior.gdp_mu2": "number", "prior.mixed": "boolean", "prior.point": "object",
		"prior.point.delta": "number", "prior.point.eps": "number", "prior.point_delta": "number", "prior.point_eps": "number",
		"prior.point_mixed": "boolean", "prior.rdp": "number", "prior.rdp_less": "count", "prior.rho": "number", "prior.step": "object",
		"prior.step.delta": "number", "prior.step.eps": "number", "prior.steps": "count", "prior.sum_delta": "number",
		"prior.sum_eps": "number", "prior.sum_eps_sq": "number", "prior.sum_eps_tanh": "number", "prior.sum_log_keep": "number",
		"queries": "count", "run": "string", "time": "time",
	}
	endShape = map[string]string{"at": "time", "by": "string", "from": "string", "reason": "string", "successor": "string", "where": "string"}
)

// sqlShape is shape as an SQL literal of type jsonb.
func sqlShape(shape map[string]string) string {
	b, _ := json.Marshal(shape) // a map of strings, which always encodes
	return "'" + string(b) + "'::jsonb"
}

// guardSQL makes the indexes, functions and triggers of schema version
// 5, in a database whose tables have its columns. Every function is
// pinned to the catalog's names (SET search_path = pg_catalog, pg_temp;
// PostgreSQL never looks up a function or an operator in pg_temp), so
// that no caller's search_path changes what an operator, a
// pg_trigger_depth() or a pg_current_xact_id() of a trigger is. The
// tables' defaults (session_user, pg_current_xact_id(), now()) were
// bound when the tables were made, and guard_ledger overwrites them.
var guardSQL = strings.NewReplacer("{spend_shape}", sqlShape(spendShape), "{end_shape}", sqlShape(endShape)).Replace(`
CREATE UNIQUE INDEX ledgers_live ON darrm.ledgers (ensemble) WHERE NOT retired;
CREATE INDEX lines_run ON darrm.lines (ledger, run) WHERE run IS NOT NULL;
CREATE FUNCTION darrm.bad_key(j json, plain boolean, shape jsonb) RETURNS text LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp AS $$
WITH RECURSIVE t(id, parent, at, gen, key, v) AS (
	SELECT '', NULL::text, NULL::text, NULL::text, NULL::text, j
	UNION ALL
	SELECT t.id || e.id, t.id, coalesce(t.at || e.sep, '') || e.at, coalesce(t.gen || '.', '') || e.gen, e.key, e.v
	FROM t, LATERAL (
		SELECT to_json(o.key)::text, o.key, '.', o.key, o.key, o.value FROM json_each(CASE json_typeof(t.v) WHEN 'object' THEN t.v END) o
		UNION ALL
		SELECT format('[%s]', a.i), format('[%s]', a.i - 1), '', '*', NULL, a.value
			FROM json_array_elements(CASE json_typeof(t.v) WHEN 'array' THEN t.v END) WITH ORDINALITY a(value, i)
	) e(id, at, sep, gen, key, v)
)
SELECT bad FROM (
	SELECT 1, format('key %s appears twice', min(at)) FROM t WHERE key IS NOT NULL GROUP BY parent, key HAVING count(*) > 1
	UNION ALL
	SELECT 2, format('key %s is not written in lowercase letters, digits and _', at) FROM t WHERE plain AND key COLLATE "C" !~ '^[a-z0-9_]+$'
	UNION ALL
	SELECT 3, format('key %s is not one darrm writes', at) FROM t WHERE key IS NOT NULL AND NOT shape ? gen
	UNION ALL
	SELECT 4, format('%s is %s, not %s', at, v, CASE shape->>gen WHEN 'count' THEN 'a count (a plain integer)' WHEN 'number' THEN 'a number of a float64'
		WHEN 'cost' THEN 'a number of a float64 at least 0' WHEN 'time' THEN 'a time as darrm writes it (RFC 3339)' ELSE 'a JSON ' || (shape->>gen) END)
	FROM t WHERE shape ? gen AND json_typeof(v) <> 'null' AND NOT CASE shape->>gen
		WHEN 'count' THEN v::text ~ '^(0|[1-9][0-9]{0,17})$'
		WHEN 'number' THEN CASE WHEN json_typeof(v) = 'number' THEN abs(v::text::numeric) <= 1.7976931348623157e308
			AND (v::text::numeric = 0 OR abs(v::text::numeric) >= 2.4703282292062328e-324) ELSE false END
		WHEN 'cost' THEN CASE WHEN json_typeof(v) = 'number' THEN v::text::numeric BETWEEN 0 AND 1.7976931348623157e308
			AND (v::text::numeric = 0 OR v::text::numeric >= 2.4703282292062328e-324) ELSE false END
		WHEN 'time' THEN CASE WHEN v::text ~ '^"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"$'
			THEN substr(v::text, 10, 2)::int <= extract(day FROM make_date(2000 + substr(v::text, 2, 4)::int % 400, substr(v::text, 7, 2)::int, 1) + interval '1 month' - interval '1 day')
			ELSE false END
		ELSE json_typeof(v) = shape->>gen END
) b(o, bad) ORDER BY o LIMIT 1
$$;
CREATE FUNCTION darrm.refuse_edit() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'darrm: % of darrm.% refused: darrm ledger lines are only appended, and its tables only changed by darrm', TG_OP, TG_TABLE_NAME
		USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON darrm.lines
	FOR EACH ROW EXECUTE FUNCTION darrm.refuse_edit();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON darrm.lines
	FOR EACH STATEMENT EXECUTE FUNCTION darrm.refuse_edit();
CREATE TRIGGER guard_version BEFORE INSERT OR UPDATE OR DELETE ON darrm.schema_version
	FOR EACH ROW EXECUTE FUNCTION darrm.refuse_edit();
CREATE TRIGGER guard_version_truncate BEFORE TRUNCATE ON darrm.schema_version
	FOR EACH STATEMENT EXECUTE FUNCTION darrm.refuse_edit();
CREATE FUNCTION darrm.append_line() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	l darrm.ledgers%ROWTYPE;
	who text := session_user;
	own boolean;
	m text[];
	kind text;
	plen int;
	len int := octet_length(NEW.line);
	raw bytea;
	hash text;
	v int;
	j jsonb;
	h darrm.lines%ROWTYPE;
	hj jsonb;
	hs jsonb;
	q numeric;
	before numeric := 0;
	same text[] := ARRAY['run', 'time', 'queries', 'final', 'prior', 'bits', 'bits_at'];
	bad text;
BEGIN
	SELECT * INTO STRICT l FROM ONLY darrm.ledgers WHERE key = NEW.ledger FOR UPDATE;
	own := l.made_in = pg_catalog.pg_current_xact_id();
	NEW.writer := who;
	NEW.run := NULL;
	IF l.retired THEN
		RAISE EXCEPTION 'darrm: ledger % is retired: no line follows its end', l.name USING ERRCODE = 'DRM02';
	END IF;
	m := regexp_match(encode(substring(NEW.line FROM 1 FOR 90), 'escape'), '^\{"prev":"([0-9a-f]{64}|)","(header|past|spend|end)":');
	IF NEW.n <> l.lines + 1 OR NEW.stop <> l.size + len + 1 OR m IS NOT NULL AND m[1] <> l.head THEN
		RAISE EXCEPTION 'darrm: line % of ledger % does not follow its head, line % of hash %', NEW.n, l.name, l.lines, l.head USING ERRCODE = 'DRM01';
	END IF;
	-- A line break in a line would split it in the file form (ledger
	-- export), which darrm reads line by line.
	IF m IS NULL OR len < 90 OR encode(substring(NEW.line FROM len - 76), 'escape') !~ '^,"sha256":"[0-9a-f]{64}"\}$'
		OR position('\x0a'::bytea IN NEW.line) > 0 OR position('\x0d'::bytea IN NEW.line) > 0 THEN
		RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line: a line is {"prev":"<hash>","<header, spend or end>":{...},"sha256":"<hash>"} as darrm writes it, on one line', NEW.n, l.name
			USING ERRCODE = 'DRM03';
	END IF;
	kind := m[2];
	plen := 14 + length(m[1]) + length(kind);
	raw := substring(NEW.line FROM plen + 1 FOR len - plen - 77);
	hash := encode(substring(NEW.line FROM len - 65 FOR 64), 'escape');
	BEGIN
		j := convert_from(raw, 'UTF8')::jsonb;
		v := CASE WHEN kind = 'header' THEN (j->>'version')::int ELSE l.version END;
	EXCEPTION WHEN others THEN
		RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line: its % is no JSON object darrm writes', NEW.n, l.name, kind USING ERRCODE = 'DRM03';
	END;
	IF jsonb_typeof(j) IS DISTINCT FROM 'object' OR (NEW.n = 1) <> (kind = 'header') OR kind = 'past' AND NOT own THEN
		RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line: a ledger''s first line is its header, and no other line is; the lines of the ledger it continues are carried when it is made', NEW.n, l.name
			USING ERRCODE = 'DRM03';
	END IF;
	IF encode(sha256(convert_to(format(E'darrm-ledger/%s\n%s\n%s\n', v, m[1], kind), 'UTF8') || raw), 'hex') <> hash THEN
		RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line: its sha256 does not match its content', NEW.n, l.name USING ERRCODE = 'DRM03';
	END IF;
	-- jsonb keeps the last of two equal keys, Go's encoding/json the last
	-- key that matches a field whatever its case: a line is one that both
	-- read alike (each key once, in lowercase), and one that Go decodes
	-- (no key but darrm's, each value of its type). The header is its
	-- maker's, whose JSON keeps Go's own names (K, Delta) and the
	-- analysts' (shares).
	IF kind <> 'past' THEN
		bad := darrm.bad_key(convert_from(raw, 'UTF8')::json, (kind <> 'header')::boolean, (CASE kind WHEN 'spend' THEN {spend_shape} WHEN 'end' THEN {end_shape} END)::jsonb);
		IF bad IS NOT NULL THEN
			RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line: in its %, %: darrm writes each key of an object once, in lowercase, and a value of its type', NEW.n, l.name, kind, bad
				USING ERRCODE = 'DRM03';
		END IF;
	END IF;
	IF kind = 'header' THEN
		IF j->>'id' IS DISTINCT FROM l.id OR j->>'ensemble' IS DISTINCT FROM l.ensemble THEN
			RAISE EXCEPTION 'darrm: the header of ledger % is not of the identity and ensemble of its row', l.name USING ERRCODE = 'DRM01';
		END IF;
		IF v NOT IN (4, 5) THEN
			RAISE EXCEPTION 'darrm: the header of ledger % is of version %: a ledger in PostgreSQL is of version 4 or 5', l.name, v USING ERRCODE = 'DRM03';
		END IF;
	ELSIF kind = 'end' THEN
		IF j->>'reason' IS DISTINCT FROM 'retired' OR coalesce(j->>'successor', '') = '' THEN
			RAISE EXCEPTION 'darrm: line % of ledger % ends it, but not as retired for a ledger that replaced it: a ledger in PostgreSQL ends only so', NEW.n, l.name USING ERRCODE = 'DRM03';
		END IF;
		IF j->>'by' IS DISTINCT FROM who THEN
			RAISE EXCEPTION 'darrm: line % of ledger % says that % retired it, but user % writes it: an end line names the user that writes it', NEW.n, l.name, coalesce(j->>'by', 'no one'), who
				USING ERRCODE = 'DRM03';
		END IF;
		IF NOT pg_has_role(who, l.maker, 'MEMBER') THEN
			RAISE EXCEPTION 'darrm: user % may not retire ledger %: only the role that made it, %, retires it', who, l.name, l.maker USING ERRCODE = 'DRM04';
		END IF;
	ELSIF kind = 'spend' THEN
		BEGIN
			q := (j->>'queries')::numeric;
			IF jsonb_typeof(j->'run') IS DISTINCT FROM 'string' OR coalesce(j->>'run', '') = '' OR jsonb_typeof(j->'queries') IS DISTINCT FROM 'number'
				OR jsonb_typeof(j->'final') IS DISTINCT FROM 'boolean' OR jsonb_typeof(j->'prior'->'steps') IS DISTINCT FROM 'number' OR q < 0 OR q <> trunc(q) THEN
				RAISE EXCEPTION 'spend';
			END IF;
		EXCEPTION WHEN others THEN
			RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line: a spend states its run, its labels (queries), whether it is final and the labels before it (prior)', NEW.n, l.name
				USING ERRCODE = 'DRM03';
		END;
		IF NOT own AND j->>'analyst' IS DISTINCT FROM who THEN
			RAISE EXCEPTION 'darrm: line % of ledger % names analyst %, but user % writes it: a spend line names the database user that charges it', NEW.n, l.name, coalesce(j->>'analyst', 'no one'), who
				USING ERRCODE = 'DRM03';
		END IF;
		NEW.run := j->>'run';
		SELECT * INTO STRICT h FROM ONLY darrm.lines WHERE ledger = l.key AND n = l.lines;
		hj := convert_from(h.line, 'UTF8')::jsonb;
		hs := hj->'spend';
		IF hs->>'run' = NEW.run THEN
			IF NOT own AND h.writer IS DISTINCT FROM who THEN
				RAISE EXCEPTION 'darrm: line % of ledger % is of run %, which %: only the analyst of a run writes its lines, its settlement among them', NEW.n, l.name, NEW.run,
					coalesce('user ' || h.writer || ' charged', 'was charged before the database knew who writes a line')
					USING ERRCODE = 'DRM04';
			END IF;
			IF (hs->>'final')::boolean THEN
				RAISE EXCEPTION 'darrm: line % of ledger % is of run %, after its final line', NEW.n, l.name, NEW.run USING ERRCODE = 'DRM03';
			ELSIF j - same <> hs - same THEN
				RAISE EXCEPTION 'darrm: line % of ledger % changes run %''s spend: a run hands out labels of one mechanism and guarantee', NEW.n, l.name, NEW.run USING ERRCODE = 'DRM03';
			ELSIF j->'prior' <> hs->'prior' THEN
				RAISE EXCEPTION 'darrm: line % of ledger % changes the totals before run %', NEW.n, l.name, NEW.run USING ERRCODE = 'DRM03';
			ELSIF (j->>'final')::boolean AND q > (hs->>'queries')::numeric THEN
				RAISE EXCEPTION 'darrm: line % of ledger % settles % labels of run %, which reserved %', NEW.n, l.name, q, NEW.run, hs->>'queries' USING ERRCODE = 'DRM03';
			ELSIF NOT (j->>'final')::boolean AND q <= (hs->>'queries')::numeric THEN
				RAISE EXCEPTION 'darrm: line % of ledger % reserves % labels of run %, after %: a run''s reservations only rise', NEW.n, l.name, q, NEW.run, hs->>'queries' USING ERRCODE = 'DRM03';
			END IF;
		ELSE
			IF EXISTS (SELECT FROM ONLY darrm.lines WHERE ledger = l.key AND run = NEW.run) THEN
				RAISE EXCEPTION 'darrm: line % of ledger % is of run %, which ended before it', NEW.n, l.name, NEW.run USING ERRCODE = 'DRM03';
			END IF;
			IF hs IS NOT NULL THEN
				before := (hs->'prior'->>'steps')::numeric + (hs->>'queries')::numeric;
			END IF;
			IF (j->'prior'->>'steps')::numeric <> before THEN
				RAISE EXCEPTION 'darrm: line % of ledger % counts % labels before it; the lines before it count %', NEW.n, l.name, j->'prior'->>'steps', before USING ERRCODE = 'DRM03';
			END IF;
		END IF;
	END IF;
	UPDATE ONLY darrm.ledgers SET lines = NEW.n, size = NEW.stop, head = hash, retired = kind = 'end', version = v WHERE key = NEW.ledger;
	RETURN NEW;
END
$$;
CREATE TRIGGER append_line BEFORE INSERT ON darrm.lines
	FOR EACH ROW EXECUTE FUNCTION darrm.append_line();
CREATE FUNCTION darrm.guard_ledger() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		IF NEW.lines <> 0 OR NEW.size <> 0 OR NEW.head <> '' OR NEW.retired OR NEW.version <> 0 THEN
			RAISE EXCEPTION 'darrm: a ledger row is made empty; its lines move its head' USING ERRCODE = 'insufficient_privilege';
		END IF;
		NEW.maker := session_user;
		NEW.made_in := pg_catalog.pg_current_xact_id();
		NEW.created := pg_catalog.now();
		RETURN NEW;
	END IF;
	IF TG_OP <> 'UPDATE' OR pg_catalog.pg_trigger_depth() < 2 OR NEW.key <> OLD.key OR NEW.name <> OLD.name OR NEW.id <> OLD.id OR NEW.ensemble <> OLD.ensemble
		OR NEW.created <> OLD.created OR NEW.maker <> OLD.maker OR NEW.made_in <> OLD.made_in OR OLD.retired OR NEW.lines <> OLD.lines + 1 THEN
		RAISE EXCEPTION 'darrm ledgers are never renamed, reopened, moved back or deleted, and only their lines move their heads: % refused', TG_OP
			USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER guard_ledger BEFORE INSERT OR UPDATE OR DELETE ON darrm.ledgers
	FOR EACH ROW EXECUTE FUNCTION darrm.guard_ledger();
-- pg_trigger_depth() is 2 in append_line's UPDATE, but in a trigger of
-- the owner's own too: check_head holds, when the transaction commits,
-- every move of a head to the line it names, which only append_line
-- inserts, so that no head moves past the last line.
CREATE FUNCTION darrm.check_head() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT FROM ONLY darrm.lines r WHERE r.ledger = NEW.key AND r.n = NEW.lines AND r.stop = NEW.size
		AND encode(substring(r.line FROM octet_length(r.line) - 65 FOR 64), 'escape') = NEW.head
		AND NEW.retired = (encode(substring(r.line FROM 1 FOR 90), 'escape') ~ '^\{"prev":"([0-9a-f]{64}|)","end":')
		AND NEW.version = CASE WHEN r.n = 1 THEN (convert_from(r.line, 'UTF8')::jsonb->'header'->>'version')::int ELSE OLD.version END) THEN
		RAISE EXCEPTION 'darrm: the head of ledger % was moved to line % of hash %, which is not its line %: only an appended line moves a head', NEW.name, NEW.lines, NEW.head, NEW.lines
			USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER check_head AFTER UPDATE ON darrm.ledgers DEFERRABLE INITIALLY DEFERRED
	FOR EACH ROW EXECUTE FUNCTION darrm.check_head();
CREATE TRIGGER guard_ledger_truncate BEFORE TRUNCATE ON darrm.ledgers
	FOR EACH STATEMENT EXECUTE FUNCTION darrm.refuse_edit();
`)

// tablesSQL makes the schema's tables of version 3 to 6 (which have the
// tables of 3), without its guards.
const tablesSQL = `
CREATE SCHEMA darrm;
CREATE TABLE darrm.schema_version (version integer NOT NULL);
INSERT INTO darrm.schema_version VALUES (6);
CREATE TABLE darrm.ledgers (
	key integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name text NOT NULL UNIQUE,
	lines bigint NOT NULL,
	size bigint NOT NULL,
	head text NOT NULL,
	created timestamptz NOT NULL DEFAULT now(),
	id text NOT NULL UNIQUE,
	ensemble text NOT NULL,
	retired boolean NOT NULL DEFAULT false,
	maker text NOT NULL DEFAULT session_user,
	made_in xid8 NOT NULL DEFAULT pg_current_xact_id(),
	version integer NOT NULL DEFAULT 0
);
CREATE TABLE darrm.lines (
	ledger integer NOT NULL REFERENCES darrm.ledgers (key),
	n bigint NOT NULL,
	line bytea NOT NULL,
	stop bigint NOT NULL,
	writer text,
	run text,
	PRIMARY KEY (ledger, n)
);
`

// migrate1SQL upgrades a database of schema version 1, which stated no
// ledger's identity and let a second ledger of an ensemble be made, to
// the tables of version 2: each row takes the identity and ensemble of
// its header. Two ledgers of one identity fail the unique key, and the
// upgrade with it (duplicatesSQL names them, and two live ledgers of one
// ensemble, first).
const migrate1SQL = `
ALTER TABLE darrm.ledgers ADD COLUMN id text, ADD COLUMN ensemble text, ADD COLUMN retired boolean NOT NULL DEFAULT false;
UPDATE darrm.ledgers l SET id = h.j->'header'->>'id', ensemble = h.j->'header'->>'ensemble'
	FROM (SELECT ledger, convert_from(line, 'UTF8')::jsonb j FROM darrm.lines WHERE n = 1) h WHERE h.ledger = l.key;
ALTER TABLE darrm.ledgers ALTER id SET NOT NULL, ALTER ensemble SET NOT NULL, ADD UNIQUE (id);
`

// migrate2SQL upgrades a database of the tables of version 2 (its
// functions and triggers dropped) to those of version 3: each ledger's
// maker is the tables' owner, who made ledgers before, and the writer of
// its lines is not known (no one continues a run of them).
const migrate2SQL = `
ALTER TABLE darrm.ledgers ADD COLUMN maker text, ADD COLUMN made_in xid8, ADD COLUMN version integer NOT NULL DEFAULT 0;
UPDATE darrm.ledgers l SET maker = (SELECT tableowner FROM pg_tables WHERE schemaname = 'darrm' AND tablename = 'ledgers'), made_in = '0',
	version = coalesce((SELECT (convert_from(line, 'UTF8')::jsonb->'header'->>'version')::int FROM darrm.lines WHERE ledger = l.key AND n = 1), 0);
ALTER TABLE darrm.ledgers ALTER maker SET NOT NULL, ALTER maker SET DEFAULT session_user,
	ALTER made_in SET NOT NULL, ALTER made_in SET DEFAULT pg_current_xact_id();
ALTER TABLE darrm.lines ADD COLUMN writer text, ADD COLUMN run text;
UPDATE darrm.lines SET run = convert_from(line, 'UTF8')::jsonb->'spend'->>'run';
`

// cleanSQL removes from darrm's schema, before anything writes a row of
// its tables (an upgrade's UPDATE among them), every trigger, rule,
// policy, CHECK or exclusion constraint, foreign key but the lines' to
// their ledger, index but a key's, column default but darrm's and
// function (every overload) of schema darrm, whoever made it: guardSQL
// then makes darrm's own. Whatever darrm does not make and cannot remove
// without losing what it holds (a table, a sequence, a type or another
// object in schema darrm, a column darrm does not make or of another type
// or collation, an inheritance), or that still uses an object outside
// pg_catalog and darrm (a column's type, a key's operator class), is
// refused, named: a superuser who upgrades the schema or makes darrm's
// guard never runs, nor seals, code that the tables' owner wrote (a
// trigger on darrm.schema_version of the owner's own, an overload of
// darrm.bad_key that makes every call ambiguous). It runs with the
// catalog's search_path (rebuild).
const cleanSQL = `
DO $clean$
DECLARE
	mine CONSTANT regclass[] := ARRAY['darrm.schema_version'::regclass, 'darrm.ledgers'::regclass, 'darrm.lines'::regclass];
	r record;
	bad text;
BEGIN
	SELECT string_agg(what, '; ' ORDER BY what) INTO bad FROM (
		SELECT pg_describe_object(d.classid, d.objid, d.objsubid) FROM pg_depend d
			WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = 'darrm'::regnamespace AND d.deptype = 'n' AND d.classid <> 'pg_proc'::regclass
			AND NOT (d.classid = 'pg_class'::regclass AND d.objid = ANY (mine) AND (SELECT relkind FROM pg_class WHERE oid = d.objid) = 'r')
			AND NOT (d.classid = 'pg_class'::regclass AND EXISTS (SELECT FROM pg_depend s JOIN pg_attribute a ON a.attrelid = s.refobjid AND a.attnum = s.refobjsubid
				WHERE s.classid = 'pg_class'::regclass AND s.objid = d.objid AND s.deptype = 'i' AND s.refobjid = 'darrm.ledgers'::regclass AND a.attname = 'key' AND a.attidentity = 'a'))
		UNION ALL
		SELECT format('column %s.%I of type %s%s%s%s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod),
			CASE WHEN a.attcollation <> t.typcollation THEN ' collation ' || a.attcollation::regcollation END,
			CASE WHEN a.attgenerated <> '' THEN ' generated' END, CASE WHEN a.attidentity <> '' THEN ' identity' END)
			FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
			LEFT JOIN (VALUES ('darrm.schema_version'::regclass, 'version', 'integer'::regtype, ''),
				('darrm.ledgers'::regclass, 'key', 'integer'::regtype, 'a'), ('darrm.ledgers'::regclass, 'name', 'text'::regtype, ''),
				('darrm.ledgers'::regclass, 'lines', 'bigint'::regtype, ''), ('darrm.ledgers'::regclass, 'size', 'bigint'::regtype, ''),
				('darrm.ledgers'::regclass, 'head', 'text'::regtype, ''), ('darrm.ledgers'::regclass, 'created', 'timestamptz'::regtype, ''),
				('darrm.ledgers'::regclass, 'id', 'text'::regtype, ''), ('darrm.ledgers'::regclass, 'ensemble', 'text'::regtype, ''),
				('darrm.ledgers'::regclass, 'retired', 'boolean'::regtype, ''), ('darrm.ledgers'::regclass, 'maker', 'text'::regtype, ''),
				('darrm.ledgers'::regclass, 'made_in', 'xid8'::regtype, ''), ('darrm.ledgers'::regclass, 'version', 'integer'::regtype, ''),
				('darrm.lines'::regclass, 'ledger', 'integer'::regtype, ''), ('darrm.lines'::regclass, 'n', 'bigint'::regtype, ''),
				('darrm.lines'::regclass, 'line', 'bytea'::regtype, ''), ('darrm.lines'::regclass, 'stop', 'bigint'::regtype, ''),
				('darrm.lines'::regclass, 'writer', 'text'::regtype, ''), ('darrm.lines'::regclass, 'run', 'text'::regtype, '')
			) e(rel, col, typ, ident) ON e.rel = a.attrelid AND e.col = a.attname
			WHERE a.attrelid = ANY (mine) AND a.attnum > 0 AND NOT a.attisdropped
			AND (e.col IS NULL OR a.atttypid <> e.typ OR a.atttypmod <> -1 OR a.attcollation <> t.typcollation OR a.attgenerated <> '' OR a.attidentity <> e.ident)
		UNION ALL
		SELECT format('inheritance of %s from %s', i.inhrelid::regclass, i.inhparent::regclass) FROM pg_inherits i
			WHERE i.inhrelid = ANY (mine) OR i.inhparent = ANY (mine)
	) b(what);
	IF bad IS NOT NULL THEN
		RAISE EXCEPTION 'darrm: schema darrm holds what darrm does not make: %', bad
			USING ERRCODE = 'DRM05', HINT = 'a superuser drops it, or moves it out of schema darrm, before darrm upgrades the schema or makes its guard against DDL';
	END IF;
	FOR r IN SELECT t.tgrelid::regclass rel, t.tgname FROM pg_trigger t WHERE t.tgrelid = ANY (mine) AND NOT t.tgisinternal LOOP
		EXECUTE format('DROP TRIGGER %I ON %s', r.tgname, r.rel);
	END LOOP;
	FOR r IN SELECT w.ev_class::regclass rel, w.rulename FROM pg_rewrite w WHERE w.ev_class = ANY (mine) LOOP
		EXECUTE format('DROP RULE %I ON %s', r.rulename, r.rel);
	END LOOP;
	FOR r IN SELECT p.polrelid::regclass rel, p.polname FROM pg_policy p WHERE p.polrelid = ANY (mine) LOOP
		EXECUTE format('DROP POLICY %I ON %s', r.polname, r.rel);
	END LOOP;
	FOR r IN SELECT c.oid::regclass rel FROM pg_class c WHERE c.oid = ANY (mine) AND (c.relrowsecurity OR c.relforcerowsecurity) LOOP
		EXECUTE format('ALTER TABLE %s DISABLE ROW LEVEL SECURITY, NO FORCE ROW LEVEL SECURITY', r.rel);
	END LOOP;
	FOR r IN SELECT co.conrelid::regclass rel, co.conname FROM pg_constraint co WHERE co.conrelid = ANY (mine)
		AND (co.contype IN ('c', 'x') OR co.contype = 'f' AND NOT (co.conrelid = 'darrm.lines'::regclass AND co.confrelid = 'darrm.ledgers'::regclass)) LOOP
		EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.rel, r.conname);
	END LOOP;
	FOR r IN SELECT i.indexrelid::regclass idx FROM pg_index i WHERE i.indrelid = ANY (mine)
		AND NOT EXISTS (SELECT FROM pg_constraint co WHERE co.conindid = i.indexrelid AND co.conrelid = i.indrelid AND co.contype IN ('p', 'u')) LOOP
		EXECUTE format('DROP INDEX %s', r.idx);
	END LOOP;
	FOR r IN SELECT a.attrelid::regclass rel, a.attname, e.def FROM pg_attribute a
		LEFT JOIN (VALUES ('created', 'pg_catalog.now()'), ('retired', 'false'), ('maker', 'SESSION_USER'), ('made_in', 'pg_catalog.pg_current_xact_id()'),
			('version', '0')) e(col, def) ON a.attrelid = 'darrm.ledgers'::regclass AND e.col = a.attname
		WHERE a.attrelid = ANY (mine) AND a.attnum > 0 AND NOT a.attisdropped AND (a.atthasdef OR e.def IS NOT NULL) LOOP
		EXECUTE format('ALTER TABLE %s ALTER COLUMN %I %s', r.rel, r.attname, coalesce('SET DEFAULT ' || r.def, 'DROP DEFAULT'));
	END LOOP;
	FOR r IN SELECT p.oid::regprocedure f, p.prokind FROM pg_proc p WHERE p.pronamespace = 'darrm'::regnamespace ORDER BY p.prokind <> 'a' LOOP
		EXECUTE format('DROP %s %s', CASE r.prokind WHEN 'a' THEN 'AGGREGATE' WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, r.f);
	END LOOP;
	SELECT string_agg(DISTINCT format('%s uses %s', pg_describe_object(d.classid, d.objid, d.objsubid), pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)), '; ') INTO bad
		FROM (SELECT * FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid IN (SELECT oid FROM pg_class WHERE relnamespace = 'darrm'::regnamespace)
			OR d.classid = 'pg_constraint'::regclass AND d.objid IN (SELECT oid FROM pg_constraint WHERE conrelid = ANY (mine))
			OR d.classid = 'pg_attrdef'::regclass AND d.objid IN (SELECT oid FROM pg_attrdef WHERE adrelid = ANY (mine))
			OR d.classid = 'pg_trigger'::regclass AND d.objid IN (SELECT oid FROM pg_trigger WHERE tgrelid = ANY (mine))
			OFFSET 0) d
		WHERE (pg_identify_object(d.refclassid, d.refobjid, 0)).schema NOT IN ('pg_catalog', 'darrm');
	IF bad IS NOT NULL THEN
		RAISE EXCEPTION 'darrm: schema darrm uses objects of another schema than pg_catalog, whose owner can change what they do: %', bad
			USING ERRCODE = 'DRM05', HINT = 'a superuser removes them before darrm upgrades the schema or makes its guard against DDL';
	END IF;
END
$clean$;
`

// ownFunctionsSQL gives the functions that an upgrade made to the owner
// of darrm's tables, who owned those it replaced, when a superuser
// upgrades a schema that another role owns: append_line acts as its
// owner (SECURITY DEFINER), and the owner keeps the functions of its
// schema.
const ownFunctionsSQL = `
DO $$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'darrm'::regnamespace
		AND p.proowner <> (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = 'darrm.lines'::regclass) LOOP
		EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %I', f, (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c WHERE c.oid = 'darrm.lines'::regclass));
	END LOOP;
END
$$;
`

// duplicatesSQL lists, in a database of schema version 1, the ledgers
// that share an ensemble (a copy shares its identity too): what the
// upgrade to version 2 refuses.
const duplicatesSQL = `SELECT string_agg(name, ', ' ORDER BY key), coalesce(h.j->'header'->>'ensemble', '?')
	FROM darrm.ledgers l JOIN (SELECT ledger, convert_from(line, 'UTF8')::jsonb j FROM darrm.lines WHERE n = 1) h ON h.ledger = l.key
	GROUP BY h.j->'header'->>'ensemble' HAVING count(*) > 1`

// durableSQL makes the transaction it runs in wait for its commit to be
// on disk, whatever the server, the database, the role or the URL's
// options say (synchronous_commit off acknowledges a commit before it is
// durable): a charge is durable before its labels leave. It is SET LOCAL
// synchronous_commit TO on, as a query, so that an append is one
// statement.
const durableSQL = `SELECT set_config('synchronous_commit', 'on', true)`

// appendSQL appends line $2+1 to ledger $1 at byte $4, durably
// (durableSQL), in one statement: the trigger append_line moves the head
// on to it when the head is line $2, whose hash the line names as its
// prev, and refuses it otherwise, so that a run that lost its lock (its
// connection) can never append twice or after another.
const appendSQL = `INSERT INTO darrm.lines (ledger, n, line, stop) SELECT $1, $2 + 1, $3, $4 FROM (` + durableSQL + `) durable`

// lockSpace is the first key of the advisory locks of darrm's runs, the
// ledger's row key the second: "darm".
const lockSpace int32 = 0x6461726d

// schema reports the version of the database's darrm schema, 0 when it
// has none.
func (p *pgLocation) schema(ctx context.Context, conn *pgx.Conn) (int, error) {
	var v int
	err := conn.QueryRow(ctx, "SELECT version FROM darrm.schema_version").Scan(&v)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && (pe.Code == "3F000" || pe.Code == "42P01"):
		return 0, nil
	case err != nil:
		return 0, p.fail("read the ledgers of database "+p.cfg.Database, err)
	case v > schemaVersion:
		return v, &serverError{where: p.redacted, bad: true, reason: p.sayf("database %s keeps its ledgers in darrm's schema of version %d; this darrm knows version %d: use a newer darrm", p.cfg.Database, v, schemaVersion)}
	}
	return v, nil
}

// pgRow is what the row of a ledger in darrm.ledgers says of it.
type pgRow struct {
	key          int32
	version      int    // the database's schema's
	id, ensemble string // "" in a database of schema version 1
	first        []byte // the first line, nil when it has none
	// user is the session's database user, who charges the runs.
	user string
}

// find returns the row of the ledger p names, in one query, whatever the
// version of the database's schema: a *NotLedgerError when the database
// has no such ledger (or no ledgers).
func (p *pgLocation) find(ctx context.Context, conn *pgx.Conn) (pgRow, error) {
	var (
		v            int
		key          *int32
		id, ensemble *string
		first        []byte
		r            pgRow
	)
	// The header is read to maxLineBytes+1 bytes at most, enough to see
	// that it is too long (pgStore.lines).
	err := conn.QueryRow(ctx, `SELECT v.version, l.key, to_jsonb(l)->>'id', to_jsonb(l)->>'ensemble',
		(SELECT substring(line from 1 for $2) FROM ONLY darrm.lines WHERE ledger = l.key AND n = 1), session_user
		FROM darrm.schema_version v LEFT JOIN ONLY darrm.ledgers l ON l.name = $1`,
		p.name, maxLineBytes+1).Scan(&v, &key, &id, &ensemble, &first, &r.user)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && (pe.Code == "3F000" || pe.Code == "42P01"), errors.Is(err, pgx.ErrNoRows):
		v = 0
	case err != nil:
		return pgRow{}, p.fail("read the ledgers of database "+p.cfg.Database, err)
	case v > schemaVersion:
		_, err := p.schema(ctx, conn)
		return pgRow{}, err
	}
	none := func(what string) error {
		return &NotLedgerError{Path: p.redacted, Reason: what + " (create it with darrm ledger init)", Err: fs.ErrNotExist}
	}
	switch {
	case v == 0:
		return pgRow{}, none(p.sayf("database %s holds no darrm ledgers, so no ledger %s", p.cfg.Database, p.name))
	case key == nil:
		return pgRow{}, none(p.sayf("database %s has no ledger named %s", p.cfg.Database, p.name))
	}
	r.key, r.version, r.first = *key, v, first
	if id != nil && ensemble != nil {
		r.id, r.ensemble = *id, *ensemble
	}
	return r, nil
}

// checkRow checks that the ledger's row states the identity and ensemble
// of its header: a row whose name was moved onto another ledger's lines
// (by the tables' owner with the guards dropped) is not the ledger its
// name was given to.
func (p *pgLocation) checkRow(r pgRow) error {
	if r.version < 2 || r.first == nil {
		return nil
	}
	ok, ensemble, id := headerIdentity(r.first)
	if !ok || id == r.id && ensemble == r.ensemble {
		return nil
	}
	return &CorruptError{Path: p.redacted, Line: 1, Reason: fmt.Sprintf("the row of ledger %s in database %s names ledger %s of ensemble %s, but its header is ledger %s of ensemble %s: the row was changed without darrm (a name moved onto another ledger's lines)", p.name, p.cfg.Database, r.id, r.ensemble, id, ensemble)}
}

// upgradeSchema upgrades the database's darrm schema of an earlier
// version to schemaVersion (migrate1SQL, migrate2SQL), once even when
// several darrm do at once: a run that charges a ledger needs its guards.
// Only the tables' owner may; two ledgers of one ensemble are refused,
// named. It returns the version it upgraded from, 0 when it found the
// schema current (another darrm upgraded it first).
func (p *pgLocation) upgradeSchema(ctx context.Context, conn *pgx.Conn) (int, error) {
	var dup, ensemble string
	from, upgraded := 0, false
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, 0)", lockSpace); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT version FROM darrm.schema_version").Scan(&from); err != nil || from >= schemaVersion {
			return err
		}
		migrate := ""
		switch from {
		case 1:
			err := tx.QueryRow(ctx, duplicatesSQL+" LIMIT 1").Scan(&dup, &ensemble)
			switch {
			case err == nil:
				return nil
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
			migrate = migrate1SQL + migrate2SQL
		case 2:
			migrate = migrate2SQL
		}
		if _, err := tx.Exec(ctx, durableSQL); err != nil {
			return err
		}
		err := rebuild(ctx, tx, migrate+fmt.Sprintf("UPDATE darrm.schema_version SET version = %d;\n", schemaVersion))
		upgraded = err == nil
		return err
	})
	var pe *pgconn.PgError
	switch {
	case dup != "":
		return 0, &serverError{where: p.redacted, bad: true, reason: fmt.Sprintf("database %s keeps its ledgers in darrm's schema of version 1, and ledgers %s are all of ensemble %s: its budget is counted more than once (a copy imported again, or a second ledger made for it). This darrm charges a database only where one ledger of an ensemble is live: keep one of them and remove the others (docs/aggregate.md, \"A team: one ledger in PostgreSQL\")", p.cfg.Database, dup, ensemble)}
	case errors.As(err, &pe) && pe.Code == "42501":
		return 0, &serverError{where: p.redacted, bad: true, err: err, reason: fmt.Sprintf("database %s keeps its ledgers in darrm's schema of version %d, which %s; user %s may not upgrade it to version %d: %s",
			p.cfg.Database, from, oldSchemaLets[from], p.cfg.User, schemaVersion, p.upgrader(ctx, conn))}
	case err != nil:
		return 0, p.fail("upgrade the schema of darrm's ledgers in database "+p.cfg.Database, err)
	case !upgraded:
		return 0, nil
	}
	return from, nil
}

// oldSchemaLets says what a schema of an earlier version lets a user do
// that the current one refuses.
var oldSchemaLets = map[int]string{
	1: "does not stop another user from settling an analyst's run or a second live ledger of an ensemble",
	2: "does not stop another user from settling an analyst's run",
	3: "lets the owner of its tables settle an analyst's run through its own search_path, and an analyst write a line that darrm reads otherwise than the database (a key twice or in capitals) or cannot read (a count of 0.0)",
	4: "has a guard against DDL that lets the owner of its tables switch a trigger off with a condition of its own (settling an analyst's run) and run code of its own as a superuser that writes its rows, and lets an analyst write a line with a line break",
	5: "lets an analyst write a line whose charge is below 0, which every release and ledger verify then refuse (a denial of service of that ledger, which lowers nothing)",
}

// upgrader says who may upgrade the database's schema, and how: the
// owner of darrm's tables, or, where darrm's guard against DDL refuses
// every other role's change of them, a superuser.
func (p *pgLocation) upgrader(ctx context.Context, conn *pgx.Conn) string {
	st, err := guardOf(ctx, conn)
	cmd := "run darrm ledger upgrade " + shellQuote(p.redacted)
	switch {
	case err != nil:
		return cmd + " logged in as the owner of darrm's tables (as a superuser, where darrm's guard against DDL is in place)"
	case st.Guarded:
		return "darrm's guard against DDL lets only a superuser change darrm's tables, their owner " + st.Owner + " included: " + cmd + " logged in as a superuser (the URL's user, if it names one, replaced by a superuser's)"
	}
	return cmd + " logged in as the owner of darrm's tables, " + st.Owner + " (or a member of it)"
}

// absent checks that the database has no ledger of this name, and, for
// a ledger of identity id and ensemble ensemble ("" when not yet known),
// none of that identity and no live one of that ensemble.
