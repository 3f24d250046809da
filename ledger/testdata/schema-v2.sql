
CREATE SCHEMA darrm;
CREATE TABLE darrm.schema_version (version integer NOT NULL);
INSERT INTO darrm.schema_version VALUES (2);
CREATE TABLE darrm.ledgers (
	key integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name text NOT NULL UNIQUE,
	lines bigint NOT NULL,
	size bigint NOT NULL,
	head text NOT NULL,
	created timestamptz NOT NULL DEFAULT now(),
	id text NOT NULL UNIQUE,
	ensemble text NOT NULL,
	retired boolean NOT NULL DEFAULT false
);
CREATE TABLE darrm.lines (
	ledger integer NOT NULL REFERENCES darrm.ledgers (key),
	n bigint NOT NULL,
	line bytea NOT NULL,
	stop bigint NOT NULL,
	PRIMARY KEY (ledger, n)
);
CREATE FUNCTION darrm.refuse_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'darrm ledger lines are only appended: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE ON darrm.lines
	FOR EACH ROW EXECUTE FUNCTION darrm.refuse_edit();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON darrm.lines
	FOR EACH STATEMENT EXECUTE FUNCTION darrm.refuse_edit();

CREATE UNIQUE INDEX ledgers_live ON darrm.ledgers (ensemble) WHERE NOT retired;
CREATE FUNCTION darrm.append_line() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	j jsonb;
	l darrm.ledgers%ROWTYPE;
BEGIN
	SELECT * INTO STRICT l FROM darrm.ledgers WHERE key = NEW.ledger FOR UPDATE;
	BEGIN
		j := convert_from(NEW.line, 'UTF8')::jsonb;
	EXCEPTION WHEN others THEN
		RAISE EXCEPTION 'darrm: line % of ledger % is not a ledger line', NEW.n, l.name USING ERRCODE = 'DRM01';
	END;
	IF l.retired THEN
		RAISE EXCEPTION 'darrm: ledger % is retired: no line follows its end', l.name USING ERRCODE = 'DRM02';
	END IF;
	IF NEW.n <> l.lines + 1 OR coalesce(j->>'prev', '') <> l.head OR NEW.stop <> l.size + octet_length(NEW.line) + 1 THEN
		RAISE EXCEPTION 'darrm: line % of ledger % does not follow its head, line % of hash %', NEW.n, l.name, l.lines, l.head USING ERRCODE = 'DRM01';
	END IF;
	IF NEW.n = 1 AND (j->'header'->>'id' IS DISTINCT FROM l.id OR j->'header'->>'ensemble' IS DISTINCT FROM l.ensemble) THEN
		RAISE EXCEPTION 'darrm: the header of ledger % is not of the identity and ensemble of its row', l.name USING ERRCODE = 'DRM01';
	END IF;
	UPDATE darrm.ledgers SET lines = NEW.n, size = NEW.stop, head = j->>'sha256', retired = j ? 'end'
		WHERE key = NEW.ledger;
	RETURN NEW;
END
$$;
CREATE TRIGGER append_line BEFORE INSERT ON darrm.lines
	FOR EACH ROW EXECUTE FUNCTION darrm.append_line();
CREATE FUNCTION darrm.guard_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		IF NEW.lines <> 0 OR NEW.size <> 0 OR NEW.head <> '' OR NEW.retired THEN
			RAISE EXCEPTION 'darrm: a ledger row is made empty; its lines move its head' USING ERRCODE = 'insufficient_privilege';
		END IF;
		RETURN NEW;
	END IF;
	IF TG_OP <> 'UPDATE' OR NEW.key <> OLD.key OR NEW.name <> OLD.name OR NEW.id <> OLD.id OR NEW.ensemble <> OLD.ensemble
		OR NEW.created <> OLD.created OR OLD.retired OR NEW.lines <> OLD.lines + 1 THEN
		RAISE EXCEPTION 'darrm ledgers are never renamed, reopened, moved back or deleted: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER guard_ledger BEFORE INSERT OR UPDATE OR DELETE ON darrm.ledgers
	FOR EACH ROW EXECUTE FUNCTION darrm.guard_ledger();
CREATE TRIGGER guard_ledger_truncate BEFORE TRUNCATE ON darrm.ledgers
	FOR EACH STATEMENT EXECUTE FUNCTION darrm.refuse_edit();
