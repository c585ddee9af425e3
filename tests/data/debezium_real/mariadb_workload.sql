DROP TABLE IF EXISTS all_types, order_lines, truncated;
CREATE TABLE all_types (
  id integer PRIMARY KEY,
  c_bool tinyint(1),
  c_tinyint tinyint,
  c_int_unsigned int unsigned,
  c_bigint_unsigned bigint unsigned,
  c_decimal decimal(12,3),
  c_float float,
  c_double double,
  c_varchar varchar(40),
  c_text text,
  c_date date,
  c_datetime6 datetime(6),
  c_timestamp timestamp NULL DEFAULT NULL,
  c_time time,
  c_year year,
  c_blob blob,
  c_json json,
  c_enum enum('red','green','blue'),
  c_set set('a','b','c'),
  c_bit bit(10)
);
CREATE TABLE order_lines (order_id integer NOT NULL, line_no smallint NOT NULL, sku varchar(20), qty integer, PRIMARY KEY (order_id, line_no));
CREATE TABLE truncated (id integer PRIMARY KEY, note varchar(40));
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (1, false, NULL, 805221, NULL, NULL, 1e-30, -2.5e+300, 'line1
line2	tab', NULL, '2069-07-27', '1900-02-28 12:42:18.084711', '2001-03-09 12:30:31', '01:19:46', 2108, X'', '[1, "two", {"three": 3}]', 'green', '', b'1000000001');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (2, 0, 1, 0, NULL, 91091105.626, 1.5, 5e-324, 'txt-250790895', 'line1
line2	tab', NULL, NULL, '2005-11-06 15:37:40', '16:59:49', 2037, X'', NULL, 'blue', 'a', b'1000000001');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (3, true, 17, 300486, 18446744073709551615, -0.001, 1e-30, NULL, 'O''Reilly', 'txt-454575497', '2024-12-03', '1973-12-23 18:47:22.469044', '1996-08-09 00:53:35', '00:27:50', 2092, X'', '[1, "two", {"three": 3}]', 'red', 'a', b'1111111111');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (4, false, -18, 4294967295, 9223372036854775808, 97.786, 3.4028234e+38, 5e-324, '日本語テキスト', 'line1
line2	tab', NULL, '2075-03-01 06:24:09.383323', '1993-05-11 03:36:48', NULL, 2134, X'2beb385b14ecf86e51af303e28b80de5fab3b0ed65', '{}', 'green', 'a', b'1000000001');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (5, false, 5, 410003, 9223372036854775808, 1, 782074.489, 0.0, 'txt-220870238', 'txt-480508482', NULL, '1970-01-01 22:11:18.869753', '2021-12-28 21:54:18', '23:59:59', NULL, X'00ff10', '[1, "two", {"three": 3}]', 'green', 'a,c', b'1111111111');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (6, false, -1, 318683, 18446744073709551615, NULL, 1e-30, 5e-324, 'txt-992741012', 'plain', '2038-01-20', '1969-12-31 02:49:26.110155', '2025-02-28 15:58:13', '00:00:00', 1958, X'00ff10', '[1, "two", {"three": 3}]', 'blue', NULL, b'0010000010');
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (6, 1, 'SKU-964', 12);
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (2, 1, 'SKU-769', 29);
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (6, 2, 'SKU-469', 43);
INSERT INTO truncated (id, note) VALUES (7, 'before truncate');
INSERT INTO truncated (id, note) VALUES (8, 'before truncate');
INSERT INTO truncated (id, note) VALUES (9, 'before truncate');
-- tx 0: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (10, NULL, -3, 875781, 9223372036854775808, -4508.076, NULL, NULL, 'double "quoted"', 'back\\slash', '1985-06-10', '2070-06-28 18:46:40.639931', '2013-06-04 18:46:15', '16:39:38', 2079, X'8a455b31a29361efa0ac8214b1753ee1ed081df9fd786a3d', '{"a": 71, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'green', 'a', b'1000000001');
COMMIT;
-- tx 1: update
BEGIN;
UPDATE all_types SET c_decimal = 136.695, c_date = '2029-07-07', c_set = '' WHERE id = 6;
COMMIT;
-- tx 2: delete
BEGIN;
DELETE FROM all_types WHERE id = 3;
COMMIT;
-- tx 3: pk_update
BEGIN;
UPDATE all_types SET id = 11, c_time = '22:29:36' WHERE id = 1;
COMMIT;
-- tx 4: delete_reinsert
BEGIN;
DELETE FROM all_types WHERE id = 11;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (11, false, 17, 576452, 267180855957, -0.001, 3.4028234e+38, 5e-324, '日本語テキスト', 'txt-200758049', '2028-02-16', '2064-06-10 13:46:39.400510', '2004-09-18 09:45:23', '15:41:59', 2155, NULL, NULL, 'red', 'a,b,c', b'0000000000');
COMMIT;
-- tx 5: multi
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (12, 0, -17, 4294967295, 378993194462, 40.651, 1e-30, -2.5e+300, 'Ünïcödé ß', 'txt-585968397', NULL, '2008-08-26 22:05:26.697352', '2019-04-26 04:52:45', NULL, 1928, X'fd56b888ac333767b688f13090b0e4a9', '{}', 'red', '', b'1111111111');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (13, false, 9, 466942, 155222122506, 1630482.846, -0.25, 0.0, 'héllo wörld', 'back\\slash', '2062-03-08', '2028-04-13 22:56:56.820157', '2001-03-28 05:05:33', '16:13:47', 2136, X'00ff10', '[1, "two", {"three": 3}]', 'red', '', b'0000000000');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (14, 1, -6, 411471, 437557441624, 0.302, 0.0, 5e-324, NULL, 'txt-143279325', '2084-01-28', '2065-09-04 11:39:13.762257', '2034-12-01 02:22:30', '00:00:00', 1901, X'', '{"a": 68, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'green', 'a,b,c', b'1000000011');
UPDATE all_types SET c_year = 1901, c_int_unsigned = 783790 WHERE id = 10;
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (5, 1, 'SKU-347', 47);
UPDATE truncated SET note = 'touched 9' WHERE id = 9;
COMMIT;
-- tx 6: order_lines
BEGIN;
DELETE FROM order_lines WHERE order_id = 6 AND line_no = 2;
COMMIT;
-- tx 7: order_lines
BEGIN;
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (3, 1, 'SKU-273', 37);
COMMIT;
-- tx 8: update
BEGIN;
UPDATE all_types SET c_bigint_unsigned = NULL, c_json = '{"a": 19, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', c_enum = 'green', c_blob = X'33fb404936de875d50' WHERE id = 12;
COMMIT;
-- tx 9: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (15, 0, 1, 937383, NULL, -4664.050, 3.4028234e+38, NULL, ' leading and trailing ', NULL, '2026-11-06', '1900-02-28 21:23:47.446554', '2001-12-25 17:47:51', '23:59:59', 2019, X'00ff10', '{"text": "héllo \\"q\\" \\\\ 🎉", "n": -12500000000.0}', 'red', 'a', b'1000000001');
COMMIT;
-- tx 10: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (16, 0, 127, 232283, NULL, -9.480, -0.25, 42245025.471423, 'double "quoted"', 'txt-7491843', '1994-04-07', '1900-02-28 08:16:13', '2000-09-19 11:51:29', '23:59:59', 1996, X'', '[1, "two", {"three": 3}]', 'blue', 'a,c', NULL);
COMMIT;
-- tx 11: multi
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (17, 1, 127, 499655, 828929102218, -777.315, 0.0, 320465240.247285, NULL, ' leading and trailing ', '1970-01-01', '1970-01-01 22:41:32.629352', '1982-09-22 12:54:28', '15:16:57', 2052, X'00ff10', NULL, 'blue', 'a,c', b'1111111111');
UPDATE all_types SET c_int_unsigned = 229079 WHERE id = 5;
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (3, 2, 'SKU-344', 18);
UPDATE truncated SET note = 'touched 8' WHERE id = 8;
COMMIT;
-- tx 12: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (18, false, -128, 0, 9223372036854775808, -636069.913, -0.25, 0.0, 'double "quoted"', 'héllo wörld', '1969-12-31', '2099-05-18 19:25:51', '2007-10-27 20:27:09', '23:59:59', 2103, X'21c10a9c3f3203e91410a06a9594aa', '[1, "two", {"three": 3}]', 'red', 'a,b,c', b'1000000001');
COMMIT;
-- truncate, then one new row
TRUNCATE TABLE truncated;
INSERT INTO truncated (id, note) VALUES (19, 'after truncate');
-- tx 13: delete_reinsert
BEGIN;
DELETE FROM all_types WHERE id = 17;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (17, 0, 127, 381504, 18446744073709551615, 43074.932, 1.5, NULL, NULL, 'héllo wörld', '2017-06-16', '1993-09-13 01:18:24.860917', '2009-09-19 16:23:10', '08:04:51', 2024, X'00ff10', '[1, "two", {"three": 3}]', NULL, 'a', NULL);
COMMIT;
-- tx 14: pk_update
BEGIN;
UPDATE all_types SET id = 20, c_double = 0.3333333333333333 WHERE id = 15;
COMMIT;
-- tx 15: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (21, true, -16, 264025, NULL, -318179.195, 3.4028234e+38, 5e-324, 'txt-173602116', ' leading and trailing ', '2038-01-20', '1974-02-05 19:16:32', '1999-09-23 14:39:07', '07:49:34', 2084, NULL, '{}', 'blue', 'a,c', b'0000000000');
COMMIT;
-- tx 16: update
BEGIN;
UPDATE all_types SET c_tinyint = 16, c_bool = NULL, c_blob = X'80a700edd34e7f41b04577b0d2883f22a30050a215c28798', c_varchar = NULL WHERE id = 13;
COMMIT;
-- tx 17: multi
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (22, false, -10, 92152, 876155344656, 93103955.809, 0.0, -689540582.425022, 'txt-376823148', 'héllo wörld', NULL, '2999-12-31 22:26:43', '1988-01-02 21:47:19', NULL, 1901, X'', '{"text": "héllo \\"q\\" \\\\ 🎉", "n": -12500000000.0}', 'blue', 'a,c', b'0010101000');
UPDATE all_types SET c_set = 'a', c_json = '[1, "two", {"three": 3}]', c_blob = X'8fd5f2a7c51019' WHERE id = 17;
UPDATE order_lines SET qty = 2 WHERE order_id = 2 AND line_no = 1;
UPDATE truncated SET note = 'touched 19' WHERE id = 19;
COMMIT;
-- tx 18: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (23, true, -8, 814328, 955281794236, -999999999.999, 1.5, 1932679.498126, 'line1
line2	tab', 'back\\slash', '1963-04-10', '2004-05-09 14:57:04.813752', '2014-03-13 04:10:33', '00:00:00', 1905, X'13c7c1624c47866c7d642a', '{"text": "héllo \\"q\\" \\\\ 🎉", "n": -12500000000.0}', 'red', 'a,c', b'0000000000');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (24, 0, 16, 208507, 279061556407, 852674855.086, 3.4028234e+38, -2.5e+300, 'txt-749246884', 'Ünïcödé ß', '1970-01-01', '2095-09-17 18:21:52.385417', '1995-09-21 01:07:09', '23:59:59', 2155, X'00ff10', '{"text": "héllo \\"q\\" \\\\ 🎉", "n": -12500000000.0}', 'red', 'a', b'0101001011');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (25, 0, 2, 4294967295, 226812505627, 5655.720, 0.0, 5e-324, 'emoji 🎉🚀', 'txt-979320026', '2017-02-17', NULL, '1999-04-06 20:27:53', '00:00:00', 2155, X'00ff10', NULL, 'green', 'a', b'0011100000');
COMMIT;
-- tx 19: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (26, NULL, -128, 4294967295, 9223372036854775808, 37985554.022, 0.0, NULL, '', 'emoji 🎉🚀', '1900-02-28', '2008-05-17 06:15:03.626278', '2010-10-26 12:58:23', '00:00:00', NULL, X'00ff10', '[1, "two", {"three": 3}]', 'red', 'a', NULL);
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit) VALUES (27, 0, -12, 791761, 542436775558, -1.583, 3.4028234e+38, 5e-324, 'back\\slash', 'txt-297348411', '2082-04-08', '1997-10-02 08:35:07.039246', '1989-05-25 21:24:27', NULL, 2029, X'', '[1, "two", {"three": 3}]', 'blue', 'a,c', b'0000000000');
COMMIT;
-- schema change mid-stream
ALTER TABLE all_types ADD COLUMN c_added varchar(20) DEFAULT 'dflt';
-- tx 20: update
BEGIN;
UPDATE all_types SET c_text = 'héllo wörld', c_varchar = 'txt-854280359', c_enum = 'green', c_json = NULL WHERE id = 5;
COMMIT;
-- tx 21: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (28, false, NULL, NULL, 636084370035, -63535.909, 3.4028234e+38, 751719268.347843, 'emoji 🎉🚀', 'O''Reilly', '2059-05-24', NULL, '2017-03-15 17:34:46', '00:00:00', 2155, X'f4cc85ae8e07f816e49527afdd', '{"a": 80, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'blue', 'a,c', b'1111111111', 'added');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (29, NULL, -128, 18139, 884132857044, 2039.369, NULL, -304832173.277264, 'line1
line2	tab', ' leading and trailing ', '2058-01-03', '2035-07-04 18:55:50', '2006-02-03 18:09:13', '00:00:00', 2155, X'', '{}', 'blue', '', b'1000000001', 'added');
COMMIT;
-- tx 22: update
BEGIN;
UPDATE all_types SET c_year = 2122, c_bigint_unsigned = 142704807357, c_decimal = 6906.151, c_double = 0.3333333333333333 WHERE id = 23;
COMMIT;
-- tx 23: order_lines
BEGIN;
DELETE FROM order_lines WHERE order_id = 3 AND line_no = 1;
COMMIT;
-- tx 24: update
BEGIN;
UPDATE all_types SET c_float = 0.0, c_added = 'x', c_double = 5e-324 WHERE id = 10;
COMMIT;
-- tx 25: update
BEGIN;
UPDATE all_types SET c_bit = b'1111111111', c_int_unsigned = NULL WHERE id = 11;
COMMIT;
-- tx 26: order_lines
BEGIN;
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (1, 1, 'SKU-135', 10);
COMMIT;
-- tx 27: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (30, 1, 15, 46485, 18446744073709551615, 522.481, 3.4028234e+38, -2.5e+300, 'plain', 'txt-763655627', '2061-11-25', '2007-12-28 12:09:40.282987', '1991-04-10 07:36:25', '23:59:59', 1901, NULL, '{}', 'blue', '', b'0101111101', 'added');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (31, 0, 16, 0, 9223372036854775808, 67660301.682, 1e-30, -163567452.393383, NULL, '日本語テキスト', '1969-12-31', '2009-02-25 16:40:34.016339', '2006-10-04 01:48:40', '23:59:59', 2121, X'8a2f460f8f2545db2148', '{"text": "héllo \\"q\\" \\\\ 🎉", "n": -12500000000.0}', 'green', '', b'1000000001', 'added');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (32, true, NULL, 874873, 9223372036854775808, -62671811.712, 0.0, 0.0, 'txt-125470977', 'emoji 🎉🚀', '1993-01-26', '2071-05-20 23:36:58.089814', NULL, '23:59:59', 1992, X'', NULL, 'blue', 'a', b'1001110001', 'added');
COMMIT;
-- tx 28: pk_update
BEGIN;
UPDATE all_types SET id = 33, c_text = NULL WHERE id = 11;
COMMIT;
-- tx 29: update
BEGIN;
UPDATE all_types SET c_bigint_unsigned = NULL, c_int_unsigned = 0, c_varchar = 'back\\slash' WHERE id = 13;
COMMIT;
-- tx 30: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (34, false, -11, 873614, 159458680803, 1, 687456.928, -2.5e+300, 'emoji 🎉🚀', 'txt-965376516', '1972-12-08', '1900-02-28 15:31:26.477067', '2021-01-13 12:02:37', NULL, 1901, X'131c48e6e85421d389b94713aa441ced7ff5682b', '{}', 'blue', 'a', b'1000000001', 'x');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (35, 1, -6, 0, 323768276299, 54152.364, 1e-30, NULL, '', 'txt-962717151', '1989-03-20', NULL, '2007-12-05 13:15:18', '00:00:00', 2039, X'3068dcdf2fc3e8f93f37e8776e2d1a958e2398fdb392', NULL, 'red', 'a,c', b'1111111111', 'added');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (36, 0, 127, 523043, 18446744073709551615, 0, -760593.975, 0.3333333333333333, 'back\\slash', 'line1
line2	tab', '2060-11-13', '1969-12-31 06:45:27', '1986-07-23 23:27:57', '23:59:59', NULL, X'', '{"text": "héllo \\"q\\" \\\\ 🎉", "n": -12500000000.0}', 'blue', 'a,c', b'1111101000', 'x');
COMMIT;
-- tx 31: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (37, 1, 127, 22102, 18446744073709551615, 910353000.830, 3.4028234e+38, 0.3333333333333333, 'O''Reilly', 'emoji 🎉🚀', '2060-01-01', '1967-04-20 15:12:43', '2020-02-10 10:39:33', '23:59:59', 1944, X'9fcb04fbe6c9c82fa62a2c66d538b8c62da695c23adb7ada', '{}', 'blue', 'a,b,c', b'1111111111', 'x');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (38, 0, -17, 4294967295, 543493569840, NULL, 1e-30, 5e-324, NULL, 'txt-739592083', '1990-03-09', '2082-09-05 02:16:47', '2019-09-08 09:18:42', '23:59:59', 1938, NULL, NULL, 'blue', 'a', b'0000000000', 'x');
COMMIT;
-- tx 32: multi
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (39, 0, -10, 17144, 424351388246, 7.927, -0.25, 0.0, 'txt-840423073', 'line1
line2	tab', '1969-12-31', NULL, NULL, '00:00:00', 1901, X'3254e932dfe82d33e0c3cdc3', '[1, "two", {"three": 3}]', 'blue', NULL, b'1111111111', 'added');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (40, 0, 1, 432631, 188777276800, -199340.735, 1e-30, -2.5e+300, 'txt-270056827', 'txt-228397454', '2068-04-22', '2062-06-14 07:40:36', '2022-12-19 12:46:43', NULL, 2025, X'', '{}', 'red', '', NULL, NULL);
UPDATE all_types SET c_set = '' WHERE id = 39;
UPDATE order_lines SET qty = 16 WHERE order_id = 2 AND line_no = 1;
UPDATE truncated SET note = 'touched 19' WHERE id = 19;
COMMIT;
-- tx 33: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (41, true, 127, NULL, NULL, 72.817, 3.4028234e+38, -2.5e+300, ' leading and trailing ', 'double "quoted"', '2033-11-10', '1952-10-18 13:15:03', NULL, NULL, 2102, X'', NULL, 'blue', '', b'1000000001', 'added');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (42, true, 18, 0, 21273085413, 3681.523, 1.5, 0.0, '', 'héllo wörld', '1900-02-28', '2064-06-19 18:33:36', '2033-10-17 04:43:26', '10:01:25', 1931, X'', '{"a": 37, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'red', NULL, b'1000000001', 'added');
COMMIT;
-- tx 34: pk_update
BEGIN;
UPDATE all_types SET id = 43, c_varchar = 'back\\slash' WHERE id = 10;
COMMIT;
-- tx 35: multi
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (44, 0, -128, 905110, 9223372036854775808, -4932.729, 0.0, 785121304.82568, '日本語テキスト', 'txt-615099378', NULL, '2083-11-15 14:51:36', '1976-03-05 09:57:32', NULL, NULL, X'00ff10', NULL, 'blue', '', NULL, 'x');
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (45, false, 0, 497999, 578945001434, 95.233, -0.25, 5e-324, 'plain', '日本語テキスト', '1960-04-02', '1998-10-12 05:01:16', '2019-08-26 22:47:35', '05:51:03', 2072, X'', '{"a": 43, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'blue', 'a,b,c', b'1111000001', 'added');
UPDATE all_types SET c_added = 'added' WHERE id = 17;
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (1, 2, 'SKU-104', 28);
UPDATE truncated SET note = 'touched 19' WHERE id = 19;
COMMIT;
-- tx 36: insert
BEGIN;
INSERT INTO all_types (id, c_bool, c_tinyint, c_int_unsigned, c_bigint_unsigned, c_decimal, c_float, c_double, c_varchar, c_text, c_date, c_datetime6, c_timestamp, c_time, c_year, c_blob, c_json, c_enum, c_set, c_bit, c_added) VALUES (46, 0, 127, NULL, 536585341938, 7536956.061, -883467.175, 5e-324, 'txt-466740190', 'Ünïcödé ß', '2040-12-23', '2017-05-10 19:13:05.881278', '1977-12-10 08:54:11', '23:59:59', 1916, X'', '{"a": 41, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', NULL, 'a,b,c', NULL, 'added');
COMMIT;
-- tx 37: pk_update
BEGIN;
UPDATE all_types SET id = 47, c_varchar = NULL WHERE id = 43;
COMMIT;
-- tx 38: update
BEGIN;
UPDATE all_types SET c_time = NULL, c_date = '2013-11-19', c_tinyint = 127, c_decimal = -303917771.290 WHERE id = 34;
COMMIT;
-- tx 39: update
BEGIN;
UPDATE all_types SET c_datetime6 = '2999-12-31 17:13:42.470196', c_enum = 'green', c_text = 'txt-837833685' WHERE id = 30;
COMMIT;
