
CREATE SCHEMA darrm;
CREATE TABLE darrm.schema_version (version integer NOT NULL);
INSERT INTO darrm.schema_version VALUES (3);
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
CREATE FUNCTION darrm.refuse_edit() RETURNS trigger LANGUAGE plpgsql AS $$
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
BEGIN
	SELECT * INTO STRICT l FROM ONLY darrm.ledgers WHERE key = NEW.ledger FOR UPDATE;
	own := l.made_in = pg_current_xact_id();
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
CREATE FUNCTION darrm.guard_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		IF NEW.lines <> 0 OR NEW.size <> 0 OR NEW.head <> '' OR NEW.retired OR NEW.version <> 0 THEN
			RAISE EXCEPTION 'darrm: a ledger row is made empty; its lines move its head' USING ERRCODE = 'insufficient_privilege';
		END IF;
		NEW.maker := session_user;
		NEW.made_in := pg_current_xact_id();
		NEW.created := now();
		RETURN NEW;
	END IF;
	IF TG_OP <> 'UPDATE' OR pg_trigger_depth() < 2 OR NEW.key <> OLD.key OR NEW.name <> OLD.name OR NEW.id <> OLD.id OR NEW.ensemble <> OLD.ensemble
		OR NEW.created <> OLD.created OR NEW.maker <> OLD.maker OR NEW.made_in <> OLD.made_in OR OLD.retired OR NEW.lines <> OLD.lines + 1 THEN
		RAISE EXCEPTION 'darrm ledgers are never renamed, reopened, moved back or deleted, and only their lines move their heads: % refused', TG_OP
			USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER guard_ledger BEFORE INSERT OR UPDATE OR DELETE ON darrm.ledgers
	FOR EACH ROW EXECUTE FUNCTION darrm.guard_ledger();
CREATE TRIGGER guard_ledger_truncate BEFORE TRUNCATE ON darrm.ledgers
	FOR EACH STATEMENT EXECUTE FUNCTION darrm.refuse_edit();
