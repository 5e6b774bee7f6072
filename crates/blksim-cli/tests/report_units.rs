//! The report's units and rates, as fio prints them: `kb_base=1000` puts
//! decimal units first (fio's `i2p` in `stat.c`), and the bandwidth samples
//! stay right at any rate.

mod common;

fn run(extra: &[&str]) -> String {
    let mut args = vec!["run", "--name=t", "--filename=/dev/nvme0n1", "--direct=1", "--rw=randread", "--time_based"];
    args.extend_from_slice(extra);
    let (code, out, err) = common::blksim(&args);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn kb_base_1000_prints_decimal_units_first_and_1024_binary() {
    let decimal = run(&["--runtime=2ms", "--kb_base=1000"]);
    let binary = run(&["--runtime=2ms"]);
    // fio 3.42, `show_ddir_status` and `show_group_stats`: "BW=65.5MB/s (62.5MiB/s)(131kB/2msec)".
    let bw = |text: &str| text.lines().find(|l| l.contains(" BW=")).unwrap().to_string();
    let group = |text: &str| text.lines().find(|l| l.contains("READ: bw=")).unwrap().to_string();
    let (d, b) = (bw(&decimal), bw(&binary));
    assert!(d.contains("MB/s (") && d.contains("MiB/s)(") && d.contains("kB/"), "{d}");
    assert!(b.contains("MiB/s (") && b.contains("MB/s)(") && b.contains("KiB/"), "{b}");
    let (d, b) = (group(&decimal), group(&binary));
    assert!(d.contains("bw=") && d.split("bw=").nth(1).unwrap().starts_with(|c: char| c.is_ascii_digit()));
    assert!(d.contains("MB/s (") && d.contains("io=") && d.contains("kB ("), "{d}");
    assert!(b.contains("MiB/s (") && b.contains("KiB ("), "{b}");
}

#[test]
fn bandwidth_samples_agree_with_the_bandwidth_past_37_gb_per_second() {
    // The null engine at 64 KiB moves ~120 GB/s: bytes x 10^9 in a 500 ms window passes u64.
    let out = run(&["--ioengine=null", "--bs=64k", "--size=16M", "--runtime=1200ms", "--output-format=json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let read = &doc["jobs"][0]["read"];
    let (bw, mean) = (read["bw"].as_f64().unwrap(), read["bw_mean"].as_f64().unwrap());
    assert!(bw > 37e9 / 1024.0, "the case needs more than 37 GB/s: {bw} KiB/s");
    assert!(read["bw_samples"].as_u64().unwrap() >= 2);
    assert!((mean - bw).abs() / bw < 0.01, "bw {bw} KiB/s, mean of the samples {mean}");
}

#[test]
fn unit_base_1_prints_bandwidth_in_bits_and_significant_figures_sets_the_digits() {
    let base = ["--ioengine=libaio", "--iodepth=32", "--runtime=700ms"];
    let with = |extra: &[&str]| run(&[&base[..], extra].concat());
    let line = |text: &str, key: &str| text.lines().find(|l| l.contains(key)).unwrap().to_string();
    // fio 3.42: "BW=13.3Gibit/s (14.3Gbit/s)(1192MiB/700msec)"; data amounts stay in bytes.
    let bits = with(&["--unit_base=1"]);
    let l = line(&bits, " BW=");
    assert!(l.contains("Gibit/s (") && l.contains("Gbit/s)(") && l.contains("MiB/"), "{l}");
    let g = line(&bits, "READ: bw=");
    assert!(g.contains("bit/s") && g.contains("io=") && g.contains("MiB ("), "{g}");
    // fio's bw sample line tests unit_base against 1, which fixup_options never leaves: always bytes.
    assert!(line(&bits, "   bw (").contains("MiB/s"), "{bits}");
    let bytes = with(&["--unit_base=8"]);
    assert!(line(&bytes, " BW=").contains("MiB/s ("));
    // significant_figures: the digits num2str keeps (4 by default: "IOPS=436k").
    let iops = |text: &str| line(text, " BW=").split("IOPS=").nth(1).unwrap().split(',').next().unwrap().to_string();
    let (four, six) = (iops(&with(&[])), iops(&with(&["--significant_figures=6"])));
    assert!(four.ends_with('k') && four.len() <= 5, "{four}");
    assert!(six.chars().all(|c| c.is_ascii_digit()) && six.len() == 6, "{six}");
    let bw_digits = |text: &str| {
        let l = line(text, " BW=");
        l.split("BW=").nth(1).unwrap().split(' ').next().unwrap().chars().filter(char::is_ascii_digit).count()
    };
    assert!(bw_digits(&with(&["--significant_figures=6"])) > bw_digits(&with(&[])), "more digits of bandwidth");
}

#[test]
fn disable_slat_clat_and_lat_leave_their_statistics_empty_as_in_fio() {
    // fio's io_u_queued (slat) and account_io_completion (clat, lat, and a
    // sync's time, a clat) skip what is disabled; the others stay.
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut a = vec!["--runtime=1ms", "--ioengine=libaio", "--iodepth=4", "--output-format=json"];
        a.extend_from_slice(extra);
        serde_json::from_str(&run(&a)).unwrap()
    };
    let n = |v: &serde_json::Value, lat: &str| v["jobs"][0]["read"][lat]["N"].as_u64().unwrap();
    let all = json(&[]);
    assert!(["slat_ns", "clat_ns", "lat_ns"].iter().all(|l| n(&all, l) > 0));
    for (opt, gone) in [("--disable_slat=1", "slat_ns"), ("--disable_clat=1", "clat_ns"), ("--disable_lat=1", "lat_ns")]
    {
        let v = json(&[opt]);
        for l in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(n(&v, l) == 0, l == gone, "{opt}: {l} N {}", n(&v, l));
        }
        assert_eq!(v["jobs"][0]["read"]["total_ios"], all["jobs"][0]["read"]["total_ios"], "{opt}");
    }
}
