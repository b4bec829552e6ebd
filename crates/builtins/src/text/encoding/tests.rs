//! Detection, decoding with error offsets, encoding and the round trips edit and write rely on.

use proptest::prelude::*;

use super::*;

fn stream(bytes: &[u8], encoding: Encoding) -> io::Result<String> {
    let mut out = String::new();
    Decoder::new(bytes, encoding, 2).read_to_string(&mut out)?;
    Ok(out)
}

#[test]
fn utf16_both_orders_with_surrogates() {
    let text = "hi 😀\r\nü";
    let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    assert_eq!(stream(&le, Encoding::Utf16Le).unwrap(), text);
    assert_eq!(stream(&be, Encoding::Utf16Be).unwrap(), text);
}

#[test]
fn utf16_errors_name_the_offset() {
    let err = stream(&[0x00, 0xDC, 0x41, 0x00], Encoding::Utf16Le).unwrap_err();
    assert!(err.to_string().contains("byte offset 2"), "{err}");
    let err = stream(&[0x41, 0x00, 0x42], Encoding::Utf16Le).unwrap_err();
    assert!(err.to_string().contains("ends inside"), "{err}");
    // Whole files: offsets count the BOM.
    assert_eq!(
        decode_all(b"\xFF\xFEa\0\0\xDCb\0", Encoding::Utf16Le),
        Err(Malformed::Invalid { offset: 4 })
    );
    assert_eq!(
        decode_all(b"\xFF\xFEa\0\0\xD8", Encoding::Utf16Le),
        Err(Malformed::Truncated { offset: 4 })
    );
    assert_eq!(
        decode_all(b"\xFE\xFF\0a\0", Encoding::Utf16Be),
        Err(Malformed::Truncated { offset: 4 })
    );
}

#[test]
fn windows1252_maps_the_high_range() {
    assert_eq!(
        stream(b"caf\xE9 \x93q\x94 \x80", Encoding::Windows1252).unwrap(),
        "café “q” €"
    );
}

#[test]
fn detection_is_reads_rule() {
    assert_eq!(detect(b"\xFF\xFEh\0", true), Ok(Encoding::Utf16Le));
    assert_eq!(detect(b"\xFE\xFF\0h", true), Ok(Encoding::Utf16Be));
    assert_eq!(
        detect(b"\xEF\xBB\xBFx", true),
        Ok(Encoding::Utf8 { bom: 3 })
    );
    assert_eq!(detect(b"caf\xE9\n", true), Ok(Encoding::Windows1252));
    assert_eq!(detect(b"ab\xC4\xE3\xBA\xC3", true), Err(2));
    assert_eq!(detect(b"a\xC3", false), Ok(Encoding::Utf8 { bom: 0 }));
}

#[test]
fn encoding_keeps_one_bom_and_names_what_it_cannot_hold() {
    assert_eq!(
        encode("\u{FEFF}a", Encoding::Utf16Le).unwrap(),
        b"\xFF\xFEa\0"
    );
    assert_eq!(encode("a", Encoding::Utf16Be).unwrap(), b"\xFE\xFF\0a");
    assert_eq!(
        encode("a", Encoding::Utf8 { bom: 3 }).unwrap(),
        b"\xEF\xBB\xBFa"
    );
    assert_eq!(encode("€ é", Encoding::Windows1252).unwrap(), b"\x80 \xE9");
    let refused = encode("ok\nab😀", Encoding::Windows1252).unwrap_err();
    assert_eq!(
        (refused.character, refused.line, refused.column),
        ('😀', 2, 3)
    );
    insta::assert_snapshot!(refused.to_string(), @"the file is Windows-1252 (Latin-1) and cannot hold '😀' (U+1F600) at line 2, column 3; nothing was written. Use characters the encoding has, or convert the file to UTF-8 first");
}

proptest! {
    #[test]
    fn windows1252_round_trips_every_byte(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = decode_all(&bytes, Encoding::Windows1252).unwrap();
        prop_assert_eq!(encode(&text, Encoding::Windows1252).unwrap(), bytes);
    }

    #[test]
    fn utf16_round_trips_every_text(text in "\\PC{0,200}") {
        for encoding in [Encoding::Utf16Le, Encoding::Utf16Be] {
            let bytes = encode(&text, encoding).unwrap();
            prop_assert_eq!(&decode_all(&bytes, encoding).unwrap(), text.strip_prefix('\u{FEFF}').unwrap_or(&text));
            // The streaming decoder gives the same text.
            let mut streamed = String::new();
            Decoder::new(&bytes[2..], encoding, 2).read_to_string(&mut streamed).unwrap();
            prop_assert_eq!(&streamed, text.strip_prefix('\u{FEFF}').unwrap_or(&text));
        }
    }
}
