//! Seeded random streams: xoshiro256** seeded through SplitMix64, pinned here
//! so no library update can change results. One stream per component, derived
//! from the run's seed and the component's id.

#[derive(Clone, Debug)]
pub(crate) struct Rng {
    s: [u64; 4],
    /// The second normal of the last Box-Muller pair.
    spare: Option<f64>,
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// The stream of component `component` (e.g. `"job/3"`, `"dev/nvme0n1"`) for `seed`.
    pub(crate) fn stream(seed: u64, component: &str) -> Rng {
        // FNV-1a of the component id, mixed with the seed.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in component.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        let mut x = seed ^ h.rotate_left(17);
        Rng { s: [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)], spare: None }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, n).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller; each pair of uniforms gives two).
    pub(crate) fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        let r = (-2.0 * u1.ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * u2).sin_cos();
        self.spare = Some(r * sin);
        r * cos
    }

    /// A log-normal factor with median 1 and `sigma` the deviation of its log.
    pub(crate) fn lognormal_factor(&mut self, sigma: f64) -> f64 {
        if sigma == 0.0 {
            1.0
        } else {
            (sigma * self.normal()).exp()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(1, "dev/a");
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(1, "dev/a");
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(1, "dev/b");
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::stream(7, "x");
        let mut seen = [false; 10];
        for _ in 0..1000 {
            let v = r.below(10);
            assert!(v < 10);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn lognormal_factor_has_median_near_one() {
        let mut r = Rng::stream(3, "x");
        let mut v: Vec<f64> = (0..10001).map(|_| r.lognormal_factor(0.3)).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert!((v[5000] - 1.0).abs() < 0.03, "{}", v[5000]);
    }
}
