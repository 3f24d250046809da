
CREATE SCHEMA darrm_guard;
GRANT USAGE ON SCHEMA darrm_guard TO PUBLIC;
CREATE TABLE darrm_guard.sealed (fingerprint text NOT NULL);
GRANT SELECT ON darrm_guard.sealed TO PUBLIC;
CREATE FUNCTION darrm_guard.fingerprint() RETURNS text LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp AS $$
SELECT md5(coalesce(string_agg(x, E'\n' ORDER BY x), '')) FROM (
	SELECT format('schema %s %s', n.nspname, pg_get_userbyid(n.nspowner)) x FROM pg_namespace n WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('relation %s %s %s %s %s %s %s', c.oid::regclass, c.relkind, pg_get_userbyid(c.relowner), c.relpersistence,
		c.relrowsecurity, c.relforcerowsecurity, c.relhasrules)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('column %s %s %s %s %s', a.attrelid::regclass, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'darrm' AND a.attnum > 0 AND NOT a.attisdropped
	UNION ALL SELECT format('trigger %s %s %s %s %s', t.tgrelid::regclass, t.tgname, t.tgfoid::regprocedure, t.tgenabled, t.tgtype)
		FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('function %s %s %s %s %s', p.oid::regprocedure, pg_get_userbyid(p.proowner), p.prosecdef, p.proconfig, md5(p.prosrc))
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('constraint %s %s %s %s', co.conrelid::regclass, co.conname, co.contype, pg_get_constraintdef(co.oid))
		FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('inherits %s %s', i.inhrelid::regclass, i.inhparent::regclass)
		FROM pg_inherits i JOIN pg_class c ON c.oid IN (i.inhrelid, i.inhparent) JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('policy %s %s', p.polrelid::regclass, p.polname)
		FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
	UNION ALL SELECT format('rule %s %s %s', r.ev_class::regclass, r.rulename, r.ev_enabled)
		FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'darrm'
) f
$$;
CREATE FUNCTION darrm_guard.check() RETURNS event_trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	t regclass;
BEGIN
	IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
		UPDATE darrm_guard.sealed SET fingerprint = darrm_guard.fingerprint();
		RETURN;
	END IF;
	IF TG_EVENT = 'table_rewrite' THEN
		t := pg_event_trigger_table_rewrite_oid()::regclass;
		IF (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = t) IN ('darrm', 'darrm_guard') THEN
			RAISE EXCEPTION 'darrm: % would rewrite table % of darrm''s ledgers, whose rows only their triggers may change: refused by darrm''s guard (only a superuser changes darrm''s tables)', TG_TAG, t
				USING ERRCODE = 'insufficient_privilege';
		END IF;
	ELSIF darrm_guard.fingerprint() IS DISTINCT FROM (SELECT fingerprint FROM darrm_guard.sealed) THEN
		RAISE EXCEPTION 'darrm: % changes darrm''s tables, their triggers or functions: refused by darrm''s guard (only a superuser changes darrm''s tables)', TG_TAG
			USING ERRCODE = 'insufficient_privilege';
	END IF;
END
$$;
INSERT INTO darrm_guard.sealed VALUES (darrm_guard.fingerprint());
CREATE EVENT TRIGGER darrm_guard ON ddl_command_end EXECUTE FUNCTION darrm_guard.check();
CREATE EVENT TRIGGER darrm_guard_rewrite ON table_rewrite EXECUTE FUNCTION darrm_guard.check();
