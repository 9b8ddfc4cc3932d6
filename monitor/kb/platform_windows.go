package kb

// hostPlatform is the platform whose driver floors judge this machine's
// driver (data/drivers.json's windows_* columns).
const hostPlatform = "windows"
