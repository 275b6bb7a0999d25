#![no_main]

modelcontext_fuzz::capped_allocator!();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    modelcontext::__fuzz::check_message_roundtrip(data);
});
