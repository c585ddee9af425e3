DROP TABLE IF EXISTS all_types, order_lines, truncated, toasty CASCADE;
DROP TYPE IF EXISTS mood;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE all_types (
  id integer PRIMARY KEY,
  c_smallint smallint,
  c_integer integer,
  c_bigint bigint,
  c_numeric numeric(12,3),
  c_numeric_var numeric,
  c_real real,
  c_double double precision,
  c_boolean boolean,
  c_text text,
  c_varchar varchar(40),
  c_char char(8),
  c_date date,
  c_time time,
  c_timestamp timestamp,
  c_timestamptz timestamptz,
  c_interval interval,
  c_bytea bytea,
  c_uuid uuid,
  c_json json,
  c_jsonb jsonb,
  c_enum mood,
  c_int_array integer[],
  c_text_array text[]
);
CREATE TABLE order_lines (order_id integer NOT NULL, line_no smallint NOT NULL, sku varchar(20), qty integer, PRIMARY KEY (order_id, line_no));
CREATE TABLE truncated (id integer PRIMARY KEY, note varchar(40));
ALTER TABLE order_lines REPLICA IDENTITY FULL;
CREATE TABLE toasty (id bigint PRIMARY KEY, label text, big text);
ALTER TABLE toasty ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (1, 57, NULL, -453654929244, -7504.854, -0.5, 3.4028234e+38, -2.5e+300, true, 'txt-155241841', '日本語テキスト', 'ab', '1971-09-01', '00:10:46.036205', '1970-01-01 12:02:18.909840', '1966-05-13 09:13:22.180231+14', NULL, '\x'::bytea, '3b9999c8-8699-482b-b95b-11b2ee39b190', '[1, "two", {"three": 3}]', '{"a": 9, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'happy', '{-2147483648,NULL,2147483647}', '{""}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (2, -32768, 2147483647, -259421804820, 0.769, 1e-10, 0.0, -2.5e+300, true, 'txt-835003866', 'txt-383601385', 'é', '2036-11-05', NULL, '1969-12-31 19:55:12.893940', '2079-06-13 15:13:23+14', '1 mon', NULL, '44d741f1-e4be-4f65-92a7-96a86519404d', '{"a": 72, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '{"a": 80, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'ok', '{73}', ARRAY['x y', NULL, 'quo"te', 'ü']::text[]);
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (3, -22, NULL, NULL, 3.766, NULL, 1.5, -2.5e+300, true, 'O''Reilly', 'txt-899789905', 'ab', '1990-08-26', '00:00:00', '1982-01-24 14:32:29.437196', '2041-02-26 18:00:51.114645+05:30', '-3 days', NULL, '35981f70-84c6-44db-be14-8e8b7921a828', '{}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'ok', '{1,2,3}', '{""}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (4, 45, 2147483647, NULL, 7770.834, 3.14159265358979323846, 0.0, -2.5e+300, false, 'txt-132863527', 'txt-974820854', 'abcdefgh', '2009-10-24', '23:59:59.999999', '2073-07-27 05:16:27.374488', '2094-02-12 07:11:21.486776+14', '-3 days', '\x08c8c73bc452'::bytea, 'a2ca3d8f-4576-4c3f-8f5b-f3453f50f925', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'happy', '{1,2,3}', '{""}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (5, 81, 639020, NULL, 5832.379, -0.5, 1e-30, 0.3333333333333333, false, 'txt-102233585', 'double "quoted"', '', '1965-07-01', '23:59:59.999999', '2014-05-28 10:43:09.972437', '2999-12-31 11:34:34.725400+05:30', '00:00:00.000001', '\x00ff10'::bytea, 'a2f06e0e-e738-41e0-ace6-c64381fa7b50', '{"a": 56, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', NULL, '{-2147483648,NULL,2147483647}', '{""}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (6, NULL, -705784, -427061616474, 0.820, NULL, -345487.497, -2.5e+300, NULL, ' leading and trailing ', ' leading and trailing ', 'abcdefgh', '9999-12-31', '00:00:00', '2010-12-23 07:29:36.396491', '1969-12-31 16:08:03.928062+05:30', '1 mon', '\xd24ad7e557c7552d6510f6cd05'::bytea, NULL, '[1, "two", {"three": 3}]', '{"a": 76, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'sad', '{44}', '{a,b}');
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (4, 1, 'SKU-298', 48);
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (3, 1, 'SKU-335', 22);
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (6, 1, 'SKU-796', 42);
INSERT INTO truncated (id, note) VALUES (7, 'before truncate');
INSERT INTO truncated (id, note) VALUES (8, 'before truncate');
INSERT INTO truncated (id, note) VALUES (9, 'before truncate');
INSERT INTO toasty (id, label, big) VALUES (10, 'label 10', '0m51q8v28s8chx5hhqmzhioer3b327os4rm4y5p9smxwithmcqtke4ade65cekxuczhjtwax67rt3ten09icbubyi6x48z927ae7ihhbtjjr5psm302y8m86e3c6p19npwcpvl1320rit9le28ptzy2jodhz89x88utxgybrcgycwx3cwq1gelf1a0at5ph23z0xr09b2mqdsr1gqsecqizwmzj2oajdw5cwgcbbrbc0a2wblia2kw9563aiem9z5xn948a2sdezmdzric4wm88g5ksq7inmsw18jbim5m4z0auqkr1hce9kd4cwb148pakgty5wymat3ycfjtyb68oq938m94dnqkytzdut7k6tkxf45hspzbh7z0h30zhhukw7chpcxz8ueymomjywoe4q0x268lkvbp9nypryakkg0jvhrns68dk27j9kvy7kj2qwuzjt37z4ksbhtdqr8ilwynz15j28qjyrsmbdzi77wujkyqfgfijfiwhzg89e30t88nq62gg4gxslbir5gjrk1wdbn98laumnl7ooze7ummp09kd49odcfejw54asoib82n0uoja6p1k8oap5y9ps0u3hhh7zbnpsdk1qzrxdggvziwlo9fcwijl7vcqyf6l2eh8tpqjtqejj0zag2dpp3c02u8h3m0kflhun0wb9nlfjudk2j668q40czvhij0wevcomv8636ltssa6y7r4tnpwslrppjwoxxqfpft4rqaoppxox5erkcf0nnu8im7m15cas217fqbbwomrjg3ur24psbs7330y9dsmy0unxscrogpw5ga5gfpm592g5g5neinc518im7r4m5kk29p5zp2mdg149elqiwhrexq5pow0flf93traphb08bhhuh62g9xtmpgdq0xipy6u8nxya41ym9xny72j8p4tq2ujwm0ujb0zs8wr2cxobcj67n4smggr66mg7zmadjtgcrc3xurynrrgz84be2gf2dwonwik8t7aa0ghfk1tv0jpnj4si1f4sqcb6yz80fxy0fpspca1189qdljhuz01lft4h20qgt9jclc3y4dqggi37sewvtq59vgemmtlyjjpla3p0oeyjuu7gpnna55sa5yvrrdrvc8hthleg5a3pi2xfln04j4hrjfswqsw1ilmc60cqmv9i7he4fpafppeocmx1waf1nvarlj3ykiby099gbkgk9qboxa6uf1u83mozv9ztjd999d8aa0y1tccu3ysehyhuy0fhklehyrq3sd2gf4dpgs0kmkvfcmnoxpa0xwe258faaim2txou4ynqyozb1j80l2gv88m2j14vj0p6jj9irh2plrdk3irx0nrp317s6pa2x4afzjgdgp2tt9vv3v9qpw6e1mcq33nc5o0pqbqc9eej4yvovd66aqmxsmk53bn5b7j0s9p6umwr360en8dyqpz4y4yiozca3ylj8t3wu2pr7xzsexi0q3ibh572rx1nfjj8edzukbvjjlc2upacyqo9zp4kksbmgo9jfi0ns8cobef5fygqfce16rh1tu38qh7h8h3kduwrt3qkwik8j8g5m1iukjmf2cbe50l0dlptk3xk38fhonewoc8uxf2gb8ppheru5djlhdoy6k3rv4wpwzuqhwat1u8uhf9s5hmmhdjvn9xo1l8ljwyrn4obl735g9upl0f3ml6zrwfqu8d4suyewv0h27uekmjgn7qs22tu3ln5cvefe275oem4241im6xu80sxfl09bh5wxl01bhg8nfxvdu13zol9a6jjpyje120ym5lcc5atvil6zqjubz8r2fef6su3bg8g2vnt7d0fb70g3arbtdzr7oqaxoxpikwio1b0g3j5o70dgowvkfi8xt6oy49tdcuuqk1d2ourwgsz6a6ip4y2ivqopz96ks41r7inz5x36ab3n4yxg1v5s5bvvo8n2xmtnxf4sbg70s77jwjx6byygtqfuaot2iny3pwdaz60h2c2k100fs478zc4x2xin40yzkn857egcstemwelvcm99pj8ddwozdtevlsmxjo6v7ztruny2gf6nb1ubqlol774ezog5pfx5b1ywh52xp8raez57yhdqoovh34mdoe54wkh1docacsx2hfld27v9s8ogztqjiys20ucaxz1rww95vmfdquqj2r01hqlxsw8vj61ysft01k42pritzz7fqfutahr3wbse863oocsfqmhob42cl3orsysejwskjwlptmu5s6gpyatv31fc4czc53onc2g3tnbd1fyjcqz60fd0bu3mzt81xkjzptu61l22m12dnmidx5wcv9ghutrgdoi70b7tdwj3di8vwah9q2c1oyk0q5ffejynelwu5hl14p8p9puhuwg4v23w58crmz4f2z06l2vvn7lh9au8sv9ymn32sekwy03iqm3jscxopct7ofujnwcjbq0fyya0ycac5kbp8evrq17y0pqmgviythy24oid255ca4avhosk2orprn5cyuiygo7d0nv8b41veanfi51hf6s3yx1frqzv8w092ir05s2zmdpmk6d4n7fkizo6dt4v5zflxqlgvo1nkyell567pv3nkj4rxbmf2w04uxrkgyijxmpej5dmd17n9y56ytn1eahjq3suu3g2pl9ygcynmdd79xh2ilwx8j8f5ymmg80i8luqbh59lscd1aanr3daq8r3xbcgzi0ma1wh0dwodv16rwmaajd2dif93xxoausfoju7sootzcw465qxo6xr0wp6ue3jrsu97ilq4ba5tifl8gfg0nvf54hee6ybxzx9zg1mjrkpsq6zkt9nib2wyi8xqrjn24qgdmugrn7k6fx7it6r2qgrlabd56ndbfj2quydxxhlt8iqb7uuckvwdt4qxyga0jvp2fb3mdc393kwidkkz7fmnwdjnswajm060zz7ld1q62vkvxml6vzn2nzrr129el1askj2o30');
INSERT INTO toasty (id, label, big) VALUES (11, 'label 11', 'dh7nikx1e67wh9fltosdqqzidt7lv0kooxyexj2yw47ts6yalijjrjqet4hseqyaz738ka2rdnshibv0z30ats3c4frrofynmyjdgl123ujpsx7xa7xrz80rdr8ss6iffhkefs466y94ifr3w63wv6wpn4d76yfcm2jpw3rhg2d4j30kw3eefjem3jkebv4udcx3yej6saeq8qoiqrbyd3d5e30zqubipfnb68i3r7s8pm4xnu3eir8uao35weknh3d9k43d7qncq47aommnaliustjwb1n3fz5tlsn1scgnxji1h864zgp82ltjr6m7n9j55fldvcxwj83ljiuvej0zh8ir8io91faoml5yzdghh7tybcwx6mx2vurprbdyjekv21a5133jwtfq21hq2y7qon17vpagn706bqxp27huf35avy2wmtn9ee96kny104gsy2frzai5rdelwpp3mqfv4mzb5xqlb1xuc8dmdilhccz41xdia0y25xegajsu90tse5f210k2nsvue74fxu4jx8afuws0bisho3c8ddooij8zjxk01xpaopvqsujfw74ip4x5lbe5qsv7oppfl4vx3g0n24myklg0d2a4oizvcocvx34z2w8pubsorx11ijs0w5s1vse2n1nwassadrm5q7l8mmt67smrm2anwfy97h26nvguz3mxwemkxkd9jfapwa4se5hrvgx4mzwti03oh75sf99ffkmp8ewg66mkca6saisykv5cwuirojwe0vg0yl3twbeugjo3pjjae1vigas1f5lwnc8b1rg2ulyqmje12k08ze3tgb3qe6voc24grjjkpcjamsctbp3xodno6fvk7vfm4i80y7d41018pnrofsxmy1k5qxtk7vnp6wnpx2ajfyhjgrjukefesuu8040gcgoffcmtor8yip8zwrb79s34r4jh951dj5kf6kwlrxzfk87rc5jal2jt4pr6mdcbsj88u3w8i8bva18c58lvqp037jiz9oge2j37yc600yprd6i3e44k5kbngowc9tqffqu9povu3hzo1kp2qy9wb1t3ylq4eh1vhujtic06xuyjkwg8jy6n26pgoz3ulvf1ojcyopufit9iui3mu0zt9ev1139tfgvwzzi45loxp6n1zqc6e3kvvzsksqb2jpq6uxfr0m8id13kkupxj34eiw0ras4lymjiaqoc6ph7mo814vu9xdgs7w2x3tiqekwkp48n2vffr49u2pnqt57jhkzkmh0y1u9ddg7xxa0ksa2eo73ug8st202ufaj09v9rmh6qfvmqbg32f5w8c6ooouzdaz37bqz264bnkmonhkcjf6t66jgwkehy8mwuerf561mb5lqg770pyv48eyrm26713pqyelvgbq4ef6adx0vrm4wz5t8kmk2pmo892ojcu1sd8olxbvqfz7zhn67yy0jej6lu1g2aa791f2abh7jxb5ilbxlxfp9k46zf1lk21cdiur8knkgyqch1bl3opom37ftyumiz88e7i79o01ty3pqvb29mb87brgj2x171neegyhho7g6gi6zwglav9fcrv9eewwf2vdzlttip7xude87kyn2c0b6vgo16nj8octypisdsrtj8e7hsljevxnqwwo49cpo2ok742b77upedpdla27e4ebkvhnlebvkhnjdvhkece2m4qlheo580kvooc5utnyrhiqnotidw05bqk6pkpnclvyf3v7hb9957ezh34pf37xngjtp2ll3ntr0xrao7ckmk2ci89m6sn6h3ftulst2ttaho8ngk9zgmczp42jxf1no1iortkuexydstfyu69q7i4it8f1v1d9sg714hskepzrztfj9ze7kjxyauvtybs3dkxqi6lrdiv41bb3xfwxh0inwpxukez8dz9jzy0arx6perrw7hbpuxr84qxygxjux62qeeu5k441qyaoz9gt9gk5fpxcyruzczhi7e2u31ge4t5gz3edbwn4t9en0m5uxlmoz2oi3txcv3gm1z156aoe6afpi19x4jn1v1r789oktlgbw7n6w89qqxl4rmp93mzwdvq1y2yh3n6m2j96g6mzf3k5wbzvt8zd4e8j8rs5dwslbpvofm4t8kg5womkhvc8y7ay328lrf49dhxuidj76dglhztud0ga94s178jj5oekjgc3ifmmksi1kwatgoa4hz1qwv3vkowgw84v12rj6va64anpvvw1eg1fjzhi8m6wwi76dkrc7igsxurffzfp9qfice2leo17bjez9j3larkz088tsmrji6jmvnrlbvp4mfyu7tk0gyurk2a4swsg3zkmjjikjlwx4q88vd96mtihtth5e28nxbxmk2a75dcl9955364vqy868zg8rdwhc6tkiml9p1rwybb1l7acpomplopa4ksdlzaxyyevur6qjuc6fqgbkwqgxiopr650fz1a9hvlfmh03nfncg45h6o4e6mzlvd3p4ncsvx5ai3z7im1b6fx74dslbxkat6rcneez7u6xbjbdppljyike9pbrm8bia36by89cshy4xk71omxbwtil6f6k0racsrpayep2f4pnvzihg88vn70l8jzi0swk71oq46ch9n8cflnxg7d27ayvilg7o7vydr75lrpwjmg22z6hla1ek3rol6jpms0fzpygqhnhfvjwm7jvgtrkyd85gdyzmih1wejnq0jh61l5kjycd4qrlcm8ul8ye2cuye9buqf5xqd8gc66dhscmq9tbbgt863gipqc893i53du2jo9of9cgb3jyzvdcsklpkwnd9faubkve8ipg2o2q4r2ms6iv7w8vllxcx04xriveth6qfh28jf3y716bize25nh8wjrf9cplbe2rbas6k85f3rce3jvpsvv97jaqoofowkpuawhr0t8wk5t7ohx2t8nhkal073domfinlecxs9lrjqevbtg1t0j1t3qe2k8u66p7');
INSERT INTO toasty (id, label, big) VALUES (12, 'label 12', 'tf1qdsutd6p54ewi5863itoh5yitrxn5cqsg5mxfsxxjj6x6n0zogm8mt5yoaqyv4q78dfgeiwthdf0tmmtyqtbzmene7jzf1354185w0eqirex5bve14hjl0mgoncmbj72goqpi3cza9illkcu80tztv8eibc8fpk7cbfe1iqylrnw5cje2qqx2qbpm3tlw0xruq9yza7xkp2bigv7xe9gvz3mpw0xm3vrvvhrryg4qte5h4ucm20tn680955y51lu7a0kqbivixziucbfovjxalbq82sngb9yhtqz25alo4wwa92uztzo2pv646t1uq1vuzuro1panhg8wqppe5kqa92ihm685cgy4cpfm2prylksl5heszf4z0jwsleesqp8ezvsegsphyyag2fu3yi81x8u1gjxistg7wi979n2ypyio7fh0v9h1lb8t37o7hge58voma5tpp85kjw9s7cg4ocnl5ohi5zbgvajahbdikm2ri8iwl8c9ue24be7xzs1ic3hkuvrkveew35cu0eu0t7yzkb4x00x15n1zwfbb8nkhwnskmhuwikn42n35npfdwv925je8153k99emirzmy5i2hmkdu3yxam3xc2pyusb382pvqygz99w1jcj202yiftxpxasqacvcanxkvr7llg78y8fdh4404tnm02ozi4izh2d1gw9de71jrc00ia9ez95mhxlwan59ghxys705ahrq1uif9wntr96r9ximejb5rwzp8j63nuz0ag08h035dfdhv3i4shltin5bqwk2awnqaopkw9v1hys9lnjb4ju2lokuqbrqiu3apb6oj1l7cpdkwdq6jm8v4ab3d9kr8u5qni1jvdoy3mxj4wpt2aqgp1pu1mw0t48ccr021rp7w0unuqdwolhg81eq8pld8e0upxbzugqmsyatmw59owstzmfeg3re7r6nqskv9lgx4257azls6bh7ei2i75g0ewuipokd9rm4g7fzpcszhsd8x1suhfw3knw3822l9x6poqbb7lax6vjdh54lx5nxjmjwoyl2gc12cbuukdr7eehthld5a7tiuaq0jvj6idz99fvk9ch94gvmjombmu3ac83vibrne7mnwi7frnqv3sic8hpbzmdunho0ens5xsavsz2m5l3ayngx9bml2ikapuzyhd6tne22z9lo2ob9xrpql7fux3xrnrx6ff66bkmhmn3c97i0unvf5d25fzok36mwr9nokplafy0ftwwk8qa2osjyqz82px935iyj5zm24wt7hxie8aigy71u5xjwp4vnj9puvp93qievyt0wu1u518eixeh22la8gyrf6odpz9ysbfiu9me4hdhaapiyijv38jhg4b14w4eyez1w3wltj78u4bzij6cr2nxhzuw3wgr1jyak9imdzsrgk4tbdiet4xxwg9tukf84akt6fembe8c47ko4bqduxtcloel0pxv59pkan9nbopgtdfwyat06p2g0fwe9m05p95egtlufabzglg3ibilpjnbklnrzidr3gzpm2q9541hpt5ohb35hm1atu5t543aouwqynelsin3jl5qprg8laxgadgxbkim3h7z19h35jyz01hj4yd02n8y4r2c4dbv3dyeveywxav3nfmac74xb4chxauq8646ukyt0lz5s09ptt15xfr5t3xoecljeq08l97crw993jqunndp5ziogqzpc09ihibseeemyb04hf9myife6c9m0viepgvm7l14aqcusm09kyh41ity9bsd53znvb9dm4wlehp56kkynl05lrenzbf9cz3bizkb3kttgqvyu52vh227nr8i07wdlyfp9oawx51r25431yqo8gwj6sgtjw48uiqqqr8quchbu3788gg5aafdo2qr3t1ao78gsyouabhzwrxxz5vmehbnhe0fk8aehma0abc433r1ivud6hleze88aixz172xogrkcizi5vy2r2nq3154jf9tb7l67gpsvkbhd56e3b2leotq1ys6evxk855w0mcha0tuyti5ygk60bx7na1ezku7qftuqh10hf6terga2vqjid8e7aftodcqyl9fhlagggiuh69fxvu0b2lid8ti9fjmg0go0a86olw5jzowkvshpz4whwsiyczbck4aczu8os0cw2xklyzhkptosd5u80t0u05tbz46cvq2o7lqbtmdy1zo4ukxnz0lbu1goh0dph8bc7qa6nf4zkv6t9dmp134koht6aft32u59hn8iqnklqtyt4jh6z825ccadzeusy9qtob4qpguudcrh655omz9cvwoip43icjgbd08g7dso1tjb8i3ws4f73wol5vvtom0lojagv42qzn560cjkxpmoxa389z9m3ws2ifhptyvdcj6l5q2bljpeknskfsni1pmdn871ozdd8972e3v703wjn2zj07n8q29ypbrwh64aahxgh5du4bkn5ajbuzc744abzxmay098rklb923pe5izwwxtwr2ag2gmr0ettf4wn6b7poa5cpe9uxk9hlezgb7ccic3z7eb74wyvsopjv32zhzjvu7hj56a7n3bxnjef4dadcnrqjq8yjkc22xy5hitf5jpd30tor2afcy357s367qn4amm54farkwjvtfr52lrp3m466pr62p3g1aq0jxyl1al8mf8n1hga7xzygqm6su8f6mo3rf5nc6ud7f6tiuh7g9ggnds7icdxmr1u382dhp0w259n3o9hqo9alek6hxdhp436is1vi9ele14qkvwl1001hr29kwecwhl48x4uiv1vt4cs7w5owcw5kv787encri6k1hr9ud9y9qrzr9fjodq17nb463ugha3bunw4sct2i2qb3imlpgpqb4fpiae4o57w8ngoutbkldi3czt8bcozcm7wdcnjmcpzn0nc1ddgwdqbu4kqm93b62b6bxdq5kej5frojfonezdr3ao4gykwb1gfblc');
-- tx 0: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (13, 12, -2147483648, 880169751763, 0, -0.5, 0.0, 44580828.738873, false, 'line1
line2	tab', 'double "quoted"', 'abcdefgh', '1952-03-28', '23:07:24', NULL, '2083-06-16 16:52:58.049096-08', '00:00:00.000001', '\x00ff10'::bytea, '0f148b5e-3d17-46bc-ad92-aa9aa68c549f', '{}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'happy', NULL, '{""}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (14, 5, 2147483647, -9223372036854775808, 0.255, NULL, NULL, 0.3333333333333333, true, 'double "quoted"', 'txt-236420742', '', '2053-04-11', '23:59:59.999999', '2089-04-17 07:18:57', '1970-01-06 09:37:59.291499+05:30', '-3 days', '\xa17cbbeea49a5a6795ab6f45e7813469e56ce708fdc8f7'::bytea, '85b3c334-cc9b-4eea-abb1-026e41d55395', '{"a": 56, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '[1, "two", {"three": 3}]', 'sad', '{}', '{a,b}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (15, -90, NULL, 322988793041, 8751.259, -0.5, NULL, -2.5e+300, true, 'line1
line2	tab', '日本語テキスト', 'ab', '2017-12-13', '00:52:22.347793', '1987-01-17 05:14:49.876318', '2999-12-31 05:44:43-08', '1 year 2 mons 3 days 04:05:06.5', '\x02635f98fcf5511d2a'::bytea, 'b6320f7e-af0b-4507-9a56-a68f2a2ae893', '[1, "two", {"three": 3}]', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'happy', NULL, NULL);
COMMIT;
-- tx 1: update
BEGIN;
UPDATE all_types SET c_text_array = NULL, c_char = 'abcdefgh', c_varchar = NULL WHERE id = 15;
COMMIT;
-- tx 2: delete
BEGIN;
DELETE FROM all_types WHERE id = 3;
COMMIT;
-- tx 3: pk_update
BEGIN;
UPDATE all_types SET id = 16, c_timestamptz = '1900-02-28 08:47:46.791420+14' WHERE id = 14;
COMMIT;
-- tx 4: delete_reinsert
BEGIN;
DELETE FROM all_types WHERE id = 1;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (1, -38, -2147483648, -9223372036854775808, -0.001, -0.5, -134253.616, -2.5e+300, true, 'txt-602957663', 'line1
line2	tab', '', '1969-12-31', '00:00:00', '2096-07-09 18:09:31.123472', '1965-02-12 21:59:47.231775+00', '1 year 2 mons 3 days 04:05:06.5', '\x'::bytea, '20c299e3-2193-474e-b3b0-e300809db9cd', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', '{}', 'happy', '{-2147483648,NULL,2147483647}', '{}');
COMMIT;
-- tx 5: multi
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (17, -32768, 902455, -449261911231, NULL, -0.5, 0.0, NULL, true, 'emoji 🎉🚀', 'Ünïcödé ß', 'abcdefgh', '2022-04-19', '00:00:00', '2083-11-10 13:42:36.631045', NULL, '1 mon', '\x38e12b66073a094ef3ee'::bytea, NULL, '{}', '[1, "two", {"three": 3}]', 'sad', NULL, '{}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (18, NULL, 563631, 9223372036854775807, 84467.097, 0, -590503.073, 0.0, true, 'plain', 'txt-148031139', 'abcdefgh', '2038-01-20', '08:33:29', '1974-12-02 19:34:31.413780', '2038-01-20 22:17:24.726103+05:30', '279 hours 39 minutes', '\x61179128e3718f2c'::bytea, 'b146f0d6-14d5-45fc-a9df-39aef116650f', '{"a": 35, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '[1, "two", {"three": 3}]', 'ok', NULL, ARRAY['x y', NULL, 'quo"te', 'ü']::text[]);
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (19, 91, 113462, -290276601356, 379022.898, 1e-10, NULL, -2.5e+300, false, NULL, 'back\slash', 'abcdefgh', '2015-06-03', '03:25:10', '2069-04-20 13:49:48', '2032-07-22 19:13:31.860590+05:30', '00:00:00.000001', '\x00ff10'::bytea, '4ef39a0d-aa9b-4810-9696-012970dfef4f', '{"a": 64, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'happy', '{-2147483648,NULL,2147483647}', ARRAY['x y', NULL, 'quo"te', 'ü']::text[]);
UPDATE all_types SET c_uuid = 'ec44fe51-c9c8-4c14-9c58-ce6586ed700f' WHERE id = 1;
UPDATE order_lines SET qty = 33 WHERE order_id = 4 AND line_no = 1;
UPDATE truncated SET note = 'touched 7' WHERE id = 7;
COMMIT;
-- tx 6: order_lines
BEGIN;
INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES (4, 2, 'SKU-886', 1);
COMMIT;
-- tx 7: toast
BEGIN;
UPDATE toasty SET label = 'label 10 v180814' WHERE id = 10;
COMMIT;
-- tx 8: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (20, -32768, -813395, -119888860662, 1954.383, -0.5, 3.4028234e+38, -110830658.032998, false, 'Ünïcödé ß', 'plain', 'abcdefgh', '1970-01-01', '00:00:00', '2071-08-02 11:12:02.685154', '2066-01-22 00:51:06+05:30', '00:00:00.000001', '\xd42b'::bytea, '4964c532-37a9-4780-bde0-b81c3957b935', '{"a": 60, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '{}', 'ok', '{1,2,3}', '{a,b}');
COMMIT;
-- tx 9: toast
BEGIN;
UPDATE toasty SET label = 'label 12 v599327' WHERE id = 12;
COMMIT;
-- tx 10: delete
BEGIN;
DELETE FROM all_types WHERE id = 2;
COMMIT;
-- tx 11: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (21, -73, 63777, 9223372036854775807, 5711427.754, 0, NULL, 0.3333333333333333, true, 'txt-835962899', 'txt-572284958', '', '2062-12-22', '20:27:40.970414', '2071-11-10 20:23:17.062146', '1989-07-16 08:04:35.311734+00', NULL, NULL, '23ce24e0-6187-4ed5-877f-3747edcc3fec', NULL, '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'happy', '{}', '{""}');
COMMIT;
-- tx 12: update
BEGIN;
UPDATE all_types SET c_timestamptz = '2000-03-21 19:08:08+05:30' WHERE id = 17;
COMMIT;
-- truncate, then one new row
TRUNCATE TABLE truncated;
INSERT INTO truncated (id, note) VALUES (22, 'after truncate');
-- tx 13: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (23, 93, -953333, NULL, -379530.268, 100000000000000000000, -377486.221, 5e-324, false, 'txt-803056050', 'O''Reilly', 'é', '1957-06-27', '00:00:00', '1970-01-01 21:18:48.732636', '1985-02-08 18:12:23.769454+00', '-3 days', '\x00ff10'::bytea, 'f2030f9f-4193-40dc-a806-f4b3074d95b5', '[1, "two", {"three": 3}]', '{"a": 53, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'happy', '{-2147483648,NULL,2147483647}', '{""}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (24, -35, -287860, -651819553386, 6437304.159, NULL, -0.25, 0.3333333333333333, false, NULL, '日本語テキスト', 'é', '2016-12-04', '23:35:28.444615', '1900-02-28 10:59:45.490520', '2033-04-17 02:17:05.087552+00', NULL, '\x'::bytea, 'bcd7cc8c-a3db-4b6a-a98f-a8add6b32751', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', '{"a": 30, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'happy', '{-2147483648,NULL,2147483647}', NULL);
COMMIT;
-- tx 14: toast
BEGIN;
DELETE FROM toasty WHERE id = 11;
COMMIT;
-- tx 15: delete_reinsert
BEGIN;
DELETE FROM all_types WHERE id = 13;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (13, -58, 987033, 872013845706, 5350213.991, 3.14159265358979323846, 1e-30, 0.3333333333333333, true, 'back\slash', 'Ünïcödé ß', 'ab', '2048-11-12', '23:59:59.999999', '1900-02-28 14:37:24.895974', '1995-11-08 09:15:00.756953+00', '1 year 2 mons 3 days 04:05:06.5', '\x'::bytea, '65bd042b-4e46-4e69-b26f-9ba002973740', '[1, "two", {"three": 3}]', '[1, "two", {"three": 3}]', 'ok', '{}', '{""}');
COMMIT;
-- tx 16: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (25, -95, 637483, 375405254493, 98.185, -0.5, 0.0, 0.3333333333333333, false, 'txt-803987701', 'héllo wörld', '', NULL, '00:00:00', '2038-01-20 13:10:56.227231', '1965-12-19 03:22:49.359730-08', '00:00:00.000001', '\x00ff10'::bytea, 'f526f3d6-0167-4a21-b4b9-c1acb604f014', '{"a": 3, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '{"a": 15, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', NULL, '{1,2,3}', '{}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (26, NULL, 2147483647, -713359384564, 821762553.657, 42, 45095.701, NULL, true, NULL, 'txt-365903395', 'é', '1980-10-17', '23:59:59.999999', '2001-10-14 01:33:28', '1969-12-31 14:43:00.726612-08', '00:00:00.000001', '\x'::bytea, '9acc42b9-a2a8-4cad-9498-91ab710e1e3d', NULL, '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', NULL, '{}', '{a,b}');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (27, -32768, -786956, -633071635684, -70865.056, 3.14159265358979323846, 0.0, 0.3333333333333333, true, '日本語テキスト', 'txt-307652384', 'ab', '1970-01-01', '00:00:00', '1970-01-01 15:35:43.596623', '2073-06-04 11:38:26+00', '00:00:00.000001', '\x00ff10'::bytea, 'ff94e497-a0d8-418d-9cb7-d00cdb024d51', '[1, "two", {"three": 3}]', NULL, 'sad', '{1,2,3}', NULL);
COMMIT;
-- tx 17: toast
BEGIN;
UPDATE toasty SET label = 'label 10 v810756' WHERE id = 10;
COMMIT;
-- tx 18: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array) VALUES (28, 66, -2147483648, 942809161743, -24719.978, 1e-10, 291727.036, 0.0, false, 'emoji 🎉🚀', 'Ünïcödé ß', 'abcdefgh', '1900-02-28', NULL, '2038-01-20 21:29:50', '1900-02-28 23:16:07.230658-08', '1 mon', NULL, '210541d8-be1b-4e9a-b57d-4ca66a7c5046', '[1, "two", {"three": 3}]', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', NULL, '{-2147483648,NULL,2147483647}', '{}');
COMMIT;
-- tx 19: update
BEGIN;
UPDATE all_types SET c_int_array = '{-2147483648,NULL,2147483647}', c_timestamptz = '1969-12-31 05:49:58.442501+00', c_text_array = ARRAY['x y', NULL, 'quo"te', 'ü']::text[], c_integer = -2147483648 WHERE id = 19;
COMMIT;
-- schema change mid-stream
ALTER TABLE all_types ADD COLUMN c_added varchar(20) DEFAULT 'dflt';
-- tx 20: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (29, -96, -290530, 37724144797, 729474.386, 0, 0.0, 5e-324, true, 'double "quoted"', 'double "quoted"', 'é', '2094-05-06', '00:00:00', '1900-02-28 11:56:16.654004', '1969-12-31 05:58:47-08', NULL, '\x00ff10'::bytea, NULL, '{}', '{}', 'happy', '{1,2,3}', NULL, 'x');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (30, -32768, -2147483648, 9223372036854775807, 4317703.270, 100000000000000000000, -301465.872, 5e-324, NULL, 'back\slash', 'txt-915827343', 'é', '2038-01-20', '00:00:00', '2076-12-11 20:30:46.296758', '1993-02-24 18:59:56.114825+14', '440 hours 19 minutes', '\x6113f4d4'::bytea, 'ca7e774c-e7cf-49ef-8f1f-92f74cd2911b', '{"a": 55, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '[1, "two", {"three": 3}]', 'sad', '{}', '{}', 'x');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (31, -32, 54372, -21526483505, -0.001, 42, 3.4028234e+38, 5e-324, false, 'txt-372803156', 'plain', 'é', '2038-01-20', '23:59:59.999999', '1900-02-28 13:21:17', '1979-07-06 10:49:09.170835+05:30', '1 mon', '\x'::bytea, '21e0820d-8271-421e-aaac-de83ac56ec8a', '[1, "two", {"three": 3}]', '{}', NULL, '{-2147483648,NULL,2147483647}', ARRAY['x y', NULL, 'quo"te', 'ü']::text[], 'added');
COMMIT;
-- tx 21: pk_update
BEGIN;
UPDATE all_types SET id = 32, c_jsonb = '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}' WHERE id = 19;
COMMIT;
-- tx 22: toast
BEGIN;
UPDATE toasty SET label = 'label 10 v783558' WHERE id = 10;
COMMIT;
-- tx 23: update
BEGIN;
UPDATE all_types SET c_numeric_var = 3.14159265358979323846, c_boolean = true, c_int_array = '{-2147483648,NULL,2147483647}' WHERE id = 5;
COMMIT;
-- tx 24: toast
BEGIN;
UPDATE toasty SET big = 'lu1171f52l806lz7c2r83vaacl2grbp6l1si68bcdsghik7his41bvajwfeil5cd5oelwo8omcdnvx954ehnk5vlunmh8nfh9qau418eoi3rneprrhrqwosjx9kwps0uow8h1wcgye4rzdo7vr85kdjnl3my2bj2q7r2fn6hn6h16x1pci1cflu6vyqfagkv2c6desxva8f4snajll2glby5j5xunfqcwbbtx4b8lo9t0gzgwn32hh6x6ol2893smm7zqbj8sey8pzyzyte1j5u0cannunng6rwjnfqdaw0cvmew8lv5lqu0fatl887vg9hkfqz9vkec9na439nh4bj5h1e2u96eebldfl15bw7x1nrwyt5poss48sjpam9muq0hld0d7bbmxdhu4dy77qnu0yfksj2z7x1kmowf3fr0uifdiqesmrfv4rx5jxmvxbhjifchdvz0a6rttunhq2mtl4nidap5fbtzcr0ximj9jl9gncsdhafpro16mcqfi0f7fwmc2l87j98el81olcm0cgzz83d44169jz0gq9bx2nli0doejynplwij0mj85tvg5medefa5fa1lrvlluw4wy8b6fnko8qvnkquv2sohtvaw1frdl7vo9pl7j006vms93tvzvf1fnk70p1qilzq6bx56y6qp67aatb10j9pb59xp9svuj6x2b4i2utzpib6x6jfphb557g6hnttgd5eb6c89yy1kvd73pa237lle8wrc3jlwr11zlziofli4f8qpji52yy1jaxd90nrm8yfn2u3g1qculwabgjwbdqncazkpqv4la9mt3h4nni1etuvv17k1bwr05t5oj4fc3hu54s1cn6c8f4jbpi35wyr4uaj66uyci8vbp4xz4nr1ic27yx719utah8fny6hd7jdcicfb1v9y58xfz2pcxxt5q7e60wxd81z7nslghqa4x3eeiqon9guboody5fa36h6sl37r5bgq0y2q0gjeb38qlrbz5n1z7bvsfr7kgm8sxbm4006hmnwew1pwi0ht43ue4thlf54cenmowdm2k7gei5era7al258gfea2dhblqul5hizn67m6qfuqo5gu2pv29pwltklzfpj7jyu55roj4n89xha5ptdhocw2ua377ip9g45y1vki2kfbwl1l2rhptno73hjsz7g0e1zwrnlpmqazaonlscf7h86a00azzwzem8un5m0bz3h5clgoukqspzfxoa2daurtdv2s24evkvt40hfpgxzds8kv3ac56pbj4id0j137j6h8eq6bfeitq0djkmdcsuxihkcf2viji5n5gfcplf71yv4gbbbdenseafjqggf856qd8yrwxka1glkh9it14khjleoffl75dny385li0i9shpv9hj0brorh647nzvhlw9cby7hhvngcel3aro3wgsuhw61kk3xe33iuufcpey2j7u5isf0stedd3db3ntf2at9080h4y4vojylee206ie8ul6h00jeav95fexklo75uzcssr97hs8cna3l2xbdo9qlkgjl6x39jy14ufu4t5ij4qtoxsa7xv1bzz7qcddq04hi876zmxitzsu4evo4egrgkewcjtjuulknfrifcimu24pbs530964ng7llcd2sbzziwcigyq0e13sk66slaf5qu1xrpll8siwk0rn8iyttossro9aa4tyuwl8xgrdegg2lzt9dh7am1graqjn8b5jy95f3knrupdrfj23ihk8sa6ski03ypll67qkdgyfi9dh6q8sbusdd2b80u7tnmt6lbbf23d27szb4gq0te67rb70rdx2uly2s22w5aw4135l8285zlx1q62criya536ngxbl7cax7b4mjxixni5svpf4plo9ecm4ajxipzve1wz5ndbukgsstswzk81x7bf4enge67xfa9qiytat0ttlg1fz9yp6dcvt0snsw5j7rhea347clufzgddxavcrrv39w0oewmdi8axqzvmscvhx131a2b3yufv9xxtzn16chm96asrmrcggisg49gkth72n5csm3bcv8axahjyctvasstaeq9vgta2jl21fkougjlgbr5ddnnpk24qq3w0pwaunl2avci6tunq964abfa45bmdkn6h0dqyx0qz3ltrrtcue4vs4sfa4mk7da9ig4vazh89lch3ekxv9rigj458wr2n9r9hapy7040phgwl7dln4okwqqc5kn5ja8glijf0nt2id9i0ncn1hrbx5v3d84ux5v7atn50771um559xmeozrhkibdoq0zq085khhh3ms3ubtgsa5zjptqb3hmwcojcn8kelrio388024fouf18fxqjg3datihvdd8ffhe777kq4vi0q2cynpity53gl5m0ygguane3471hz42edhm61guvzcwansq1erlv6wytadimgrlccd0i4yfqrsc5svu2rfsxdmycjd58ovkb238zrd4uizlts8maeewgcoodts9wwtbqeo3enh0fnibbwfvn9hnnzez1yrpn8n3wzixt55qt7tc0mac1h8y5fw6x8qv088c9ts6ew6os01ryrl7u86q4di6g2mfh4jvyblqq0ymi5vcmtv09rp5qw8ubymhqzgxrvgriaxl6rvy5z80njnzj16z5z8qutpulettwh3l5yvbp53n6pl58ew5jrxs72yjaz1ukvi0n2onj8xe0efynt9efi7nxupcvnon7bbmwx9gqc4zc1fdub2ma3y71ahixydk801007u5m1zbvae5rhyhrxhah56zc7f2ucl30lt7t39l38kbcfm4dly25489pu6tq7dj6n67cddosyuq4my897rckof3rq6wjxttj4kkvq27d0a4v5r8zqqjivxrhhlur538agld53pmft5ikj3rqm25hr79hiyt7jtycorm598nrenx5yjybwiy7hwx6h47ldm71diu36v52lzi9nx57c76odgmqot3' WHERE id = 10;
COMMIT;
-- tx 25: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (33, NULL, -747096, -9223372036854775808, 0, 42, -602968.491, 0.0, true, '日本語テキスト', NULL, 'ab', NULL, '18:50:15.919869', '2064-05-13 07:47:46.867715', NULL, '00:00:00.000001', NULL, '7fa35d7f-785f-442d-8752-64c3be6540e5', '{}', '{}', 'sad', '{65}', ARRAY['x y', NULL, 'quo"te', 'ü']::text[], 'x');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (34, -32768, 2147483647, -9223372036854775808, 0.824, 1e-10, 216584.822, 5e-324, false, NULL, '', 'ab', '1900-02-28', '00:00:00', '2050-02-14 04:14:23', '1966-11-03 09:37:18.097495+14', '264 hours 6 minutes', NULL, 'e6ca2080-26c0-42a6-9078-c6ad96d9e6a8', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'happy', '{-2147483648,NULL,2147483647}', ARRAY['x y', NULL, 'quo"te', 'ü']::text[], 'added');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (35, -17, NULL, -9223372036854775808, -0.913, 42, 1.5, 0.3333333333333333, false, 'héllo wörld', NULL, 'abcdefgh', '2066-04-20', NULL, '2021-10-16 16:26:49.932850', '2999-12-31 21:02:02.369886+14', '00:00:00.000001', '\x2e309f4955'::bytea, 'e51941fe-457b-4dec-9434-f0bc82e2c2b1', '{"a": 54, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '[1, "two", {"three": 3}]', 'happy', NULL, '{a,b}', 'x');
COMMIT;
-- tx 26: update
BEGIN;
UPDATE all_types SET c_date = '2042-01-06' WHERE id = 29;
COMMIT;
-- tx 27: update
BEGIN;
UPDATE all_types SET c_varchar = 'line1
line2	tab', c_numeric_var = 1e-10, c_smallint = 8, c_numeric = 1 WHERE id = 33;
COMMIT;
-- tx 28: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (36, 32767, 133047, -437046111079, 54911068.162, 42, 3.4028234e+38, -2.5e+300, true, 'Ünïcödé ß', 'héllo wörld', NULL, NULL, '18:24:11.864931', '2090-05-20 12:50:24.004604', '2098-03-17 19:01:27.831508+14', '-3 days', '\x00ff10'::bytea, '7aea5cc0-17ad-47bb-9ae6-33eaff63fc61', '[1, "two", {"three": 3}]', '[1, "two", {"three": 3}]', 'ok', '{-2147483648,NULL,2147483647}', '{}', NULL);
COMMIT;
-- tx 29: order_lines
BEGIN;
DELETE FROM order_lines WHERE order_id = 3 AND line_no = 1;
COMMIT;
-- tx 30: delete
BEGIN;
DELETE FROM all_types WHERE id = 30;
COMMIT;
-- tx 31: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (37, 20, 2147483647, 121044100924, -0.001, 3.14159265358979323846, NULL, 157032642.516587, true, 'txt-296824290', 'double "quoted"', '', '2078-11-02', '12:02:31', '1989-08-03 07:25:12.786511', '2049-08-14 10:51:50+05:30', '1 mon', '\x'::bytea, '893201e1-b6f9-464c-84d8-d3662c9f2f76', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', '[1, "two", {"three": 3}]', 'happy', '{11}', '{a,b}', 'x');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (38, NULL, -258920, -268049172985, 200522.634, 0, NULL, 0.0, true, 'back\slash', 'txt-504757677', '', '2037-02-28', '23:59:59.999999', NULL, NULL, NULL, '\x'::bytea, '388b6d8f-ac2f-4751-a352-418a1e53f890', '{}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'ok', '{1,2,3}', '{}', 'x');
COMMIT;
-- tx 32: toast
BEGIN;
UPDATE toasty SET label = 'label 10 v332481' WHERE id = 10;
COMMIT;
-- tx 33: delete_reinsert
BEGIN;
DELETE FROM all_types WHERE id = 20;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (20, -12, -2147483648, 321254422027, -2931.916, 1e-10, 3.4028234e+38, 5e-324, false, 'line1
line2	tab', 'txt-807666557', 'abcdefgh', '2080-11-04', '00:00:00', '1992-10-24 08:05:48.870694', '2093-04-28 03:19:30.387273-08', '1 mon', '\x00ff10'::bytea, '9aeaa1ba-430e-42b8-ae23-3d72ae2fe4d3', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'happy', '{1,2,3}', '{a,b}', 'added');
COMMIT;
-- tx 34: update
BEGIN;
UPDATE all_types SET c_time = '23:59:59.999999' WHERE id = 25;
COMMIT;
-- tx 35: delete_reinsert
BEGIN;
DELETE FROM all_types WHERE id = 13;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (13, 32767, 2147483647, 25887043369, NULL, 0, NULL, 0.0, false, 'O''Reilly', 'plain', 'é', '2072-08-05', NULL, '2053-11-09 18:37:27.952945', NULL, '184 hours 14 minutes', '\x54fcb8d5c0e84ad4dd6342f4dc2af1cf0e5a26df3e42'::bytea, '9d9e107b-f380-4e53-8d2e-a28cd427c0ab', '{"a": 14, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '[1, "two", {"three": 3}]', 'happy', '{}', '{a,b}', 'x');
COMMIT;
-- tx 36: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (39, 11, -2147483648, 9223372036854775807, 1, NULL, NULL, 5e-324, true, NULL, '日本語テキスト', '', '1970-01-01', NULL, '2069-11-13 04:28:15.514853', '2051-02-22 19:38:58.376072-08', '00:00:00.000001', '\x6137618b7a'::bytea, 'c220e3e0-d419-4f72-8ca9-bb29972e4243', '{"a": 43, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', '{"a": 23, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'sad', NULL, ARRAY['x y', NULL, 'quo"te', 'ü']::text[], 'added');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (40, -32768, 761567, 252007024720, NULL, 0, 0.0, -2.5e+300, false, 'Ünïcödé ß', NULL, 'é', '2016-09-20', NULL, '2098-04-19 07:51:15.164819', '1970-01-01 01:56:48.191931+14', '00:00:00.000001', '\x00ff10'::bytea, 'ffc83bb8-c062-4410-97f5-58fb6aff2495', '[1, "two", {"three": 3}]', '{}', 'sad', '{}', '{""}', 'added');
COMMIT;
-- tx 37: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (41, 32767, -560521, -423824187690, -5225209.961, NULL, 1e-30, 5e-324, true, 'txt-651174798', 'txt-329121257', 'é', '2039-12-22', '00:00:00', NULL, '2999-12-31 12:16:21.516444+14', '00:00:00.000001', '\x00ff10'::bytea, 'eb7bba3f-d4a5-4a6a-9bfd-a67bd065803e', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', '{"text": "héllo \"q\" \\ 🎉", "n": -12500000000.0}', 'happy', '{-2147483648,NULL,2147483647}', '{""}', 'added');
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (42, -90, 2147483647, 588073515624, 84113807.524, 3.14159265358979323846, -0.25, -2.5e+300, true, 'txt-421580443', 'txt-703570835', '', NULL, '00:00:00', '2075-10-01 12:09:14.882235', '1996-02-02 03:05:21.103528+14', '1 year 2 mons 3 days 04:05:06.5', '\x00ff10'::bytea, '8ef4cbba-207f-43a4-9ba1-47c23a43cac0', NULL, '{}', 'sad', '{14}', ARRAY['x y', NULL, 'quo"te', 'ü']::text[], 'x');
COMMIT;
-- tx 38: insert
BEGIN;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (43, -21, -2147483648, -209735262236, 757.164, 1e-10, 3.4028234e+38, -2.5e+300, NULL, 'txt-139008882', 'txt-725186251', '', '2005-07-26', '01:33:27', '1971-03-06 00:51:42.722594', '1969-08-25 20:06:14+00', '1 year 2 mons 3 days 04:05:06.5', '\x00ff10'::bytea, '050c99ee-57ab-4c28-b790-e768a9676fd9', '{}', '{"a": 18, "b": [1, 2.5, null, true], "c": {"nested": "x"}}', 'sad', '{}', '{a,b}', 'added');
COMMIT;
-- tx 39: delete_reinsert
BEGIN;
DELETE FROM all_types WHERE id = 13;
INSERT INTO all_types (id, c_smallint, c_integer, c_bigint, c_numeric, c_numeric_var, c_real, c_double, c_boolean, c_text, c_varchar, c_char, c_date, c_time, c_timestamp, c_timestamptz, c_interval, c_bytea, c_uuid, c_json, c_jsonb, c_enum, c_int_array, c_text_array, c_added) VALUES (13, -47, -415011, 758665351294, 30203.376, 0, 623768.013, -718149923.807584, true, 'héllo wörld', 'O''Reilly', 'ab', '1989-12-26', '23:59:59.999999', '2038-01-20 14:32:52.948738', '2038-01-20 01:23:38+05:30', NULL, '\x00ff10'::bytea, '8be2ec85-5430-4e71-a226-71da06acf04b', '{}', '[1, "two", {"three": 3}]', 'sad', '{1,2,3}', '{}', 'x');
COMMIT;
