
CREATE SCHEMA darrm;
CREATE TABLE darrm.schema_version (version integer NOT NULL);
INSERT INTO darrm.schema_version VALUES (4);
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
		WHEN 'time' THEN 'a time as darrm writes it (RFC 3339)' ELSE 'a JSON ' || (shape->>gen) END)
	FROM t WHERE shape ? gen AND json_typeof(v) <> 'null' AND NOT CASE shape->>gen
		WHEN 'count' THEN v::text ~ '^(0|[1-9][0-9]{0,17})$'
		WHEN 'number' THEN CASE WHEN json_typeof(v) = 'number' THEN abs(v::text::numeric) <= 1.7976931348623157e308 ELSE false END
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
	IF m IS NULL OR len < 90 OR encode(substring(NEW.line FROM len - 76), 'escape') !~ '^,"sha256":"[0-9a-f]{64}"\}$' THEN
		RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line: a line is {"prev":"<hash>","<header, spend or end>":{...},"sha256":"<hash>"} as darrm writes it', NEW.n, l.name
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
		bad := darrm.bad_key(convert_from(raw, 'UTF8')::json, kind <> 'header', CASE kind WHEN 'spend' THEN '{"analyst":"string","bits":"array","bits.*":"object","bits.*.p":"number","bits.*.q":"number","bits_at":"object","bits_at.end":"count","bits_at.line":"count","bits_sha256":"string","charge":"object","charge.advanced":"object","charge.advanced.delta":"number","charge.advanced.eps":"number","charge.delta":"number","charge.eps":"number","charge.gdp_delta":"number","charge.gdp_mu2":"number","charge.point":"object","charge.point.delta":"number","charge.point.eps":"number","charge.rdp":"number","charge.rho":"number","delta":"number","discrete":"boolean","eps":"number","filter_parts":"array","filter_parts.*":"object","filter_parts.*.delta":"number","filter_parts.*.filter":"string","filter_parts.*.order":"number","filter_parts.*.slack":"number","final":"boolean","gaussian":"array","gaussian.*":"object","gaussian.*.coords":"count","gaussian.*.sigma":"number","kind":"string","laplace":"object","laplace.coords":"count","laplace.scale":"number","mechanism":"string","prior":"object","prior.advanced_delta":"number","prior.advanced_eps_sq":"number","prior.curveless":"count","prior.gdp_delta":"number","prior.gdp_less":"count","prior.gdp_mu2":"number","prior.mixed":"boolean","prior.point":"object","prior.point.delta":"number","prior.point.eps":"number","prior.point_delta":"number","prior.point_eps":"number","prior.point_mixed":"boolean","prior.rdp":"number","prior.rdp_less":"count","prior.rho":"number","prior.step":"object","prior.step.delta":"number","prior.step.eps":"number","prior.steps":"count","prior.sum_delta":"number","prior.sum_eps":"number","prior.sum_eps_sq":"number","prior.sum_eps_tanh":"number","prior.sum_log_keep":"number","queries":"count","run":"string","time":"time"}'::jsonb WHEN 'end' THEN '{"at":"time","by":"string","from":"string","reason":"string","successor":"string","where":"string"}'::jsonb END);
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
