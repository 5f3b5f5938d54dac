//! Where a report was measured: the GPU, its driver and kernel image, the date, and the
//! device-to-device copy bandwidth every bench compares its figures with.

use serde::{Deserialize, Serialize};

use super::median;
use crate::{
    cuda::{Gpu, Timer},
    error::{CudaContext as _, Result},
};

/// Where a report was measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Machine {
    pub gpu: String,
    pub cuda_driver: String,
    /// The kernel image the GPU ran (`cubin sm_90`, or the PTX); absent in older reports.
    #[serde(default)]
    pub kernels: String,
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// Device-to-device copy bandwidth, bytes read plus written.
    #[serde(rename = "copy_gb_per_s")]
    pub copy_gbps: f64,
}

impl Machine {
    /// Names the GPU and measures its copy bandwidth (printing progress to stderr).
    pub fn measure(gpu: &Gpu) -> Result<Self> {
        crate::stderr_line!("measuring the device-to-device copy bandwidth...");
        Ok(Self {
            gpu: gpu.name().into(),
            cuda_driver: gpu.driver_version(),
            // The sm_70 modules' image; on Hopper the one-cell streaming kernels come from the
            // sm_90 module and are launched with programmatic dependence.
            kernels: match crate::grayscott::cuda::programmatic_streaming(gpu) {
                true => format!("{}; one-cell streaming: programmatic launches (sm_90 module)", gpu.image()),
                false => gpu.image().to_string(),
            },
            date: today(),
            copy_gbps: copy_bandwidth(gpu)?,
        })
    }

    /// The first two lines of a bench table: the GPU, and the copy bandwidth with `what` the
    /// effective figures count.
    pub fn header(&self, what: &str) -> String {
        format!(
            "GPU: {} (CUDA driver {}{}), {}\ndevice-to-device copy: {:.0} GB/s (bytes read + written); {what}\n",
            self.gpu,
            self.cuda_driver,
            if self.kernels.is_empty() { String::new() } else { format!(", kernels: {}", self.kernels) },
            self.date,
            self.copy_gbps
        )
    }
}

/// Device-to-device copy bandwidth, counting bytes read plus bytes written: the median of 10
/// copies of up to 1 GiB (a quarter of free memory at most).
pub fn copy_bandwidth(gpu: &Gpu) -> Result<f64> {
    let (free, _) = gpu.memory()?;
    let bytes = (1usize << 30).min(free as usize / 4);
    let stream = gpu.stream();
    let src = stream.alloc_zeros::<u8>(bytes).context(|| "allocating the copy buffers".into())?;
    let mut dst = stream.alloc_zeros::<u8>(bytes).context(|| "allocating the copy buffers".into())?;
    let mut times = Vec::new();
    for i in 0..13 {
        let timer = Timer::start(gpu)?;
        stream.memcpy_dtod(&src, &mut dst).context(|| "copying".into())?;
        let ms = timer.stop()? as f64;
        if i >= 3 {
            times.push(ms);
        }
    }
    Ok(2.0 * bytes as f64 / median(&mut times) / 1e6)
}

/// Today's date (UTC), `YYYY-MM-DD`.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn today_is_a_date() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"));
    }
}
