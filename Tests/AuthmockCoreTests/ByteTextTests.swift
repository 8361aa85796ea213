@testable import AuthmockCore
import Foundation
import Testing

/// The byte-level spellings that replaced Foundation's string rewriting on
/// the request path answer exactly as Foundation did.
struct ByteTextTests {
    static let formInputs = [
        "", "plain", "a+b", "a%20b", "%41%42c", "%e2%82%ac", "%E2%82%AC+euro", "100%", "%4", "%zz", "%4g", "%ff", "%c3",
        "a%2Bb", "+++", "%%41", "%2", "caf%C3%A9", "emoji%F0%9F%98%80", "%00", "tab%09here", "ünïcode",
    ]

    @Test(arguments: formInputs)
    func formDecodingAgreesWithFoundation(_ input: String) {
        let foundation = input.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        #expect(input.formDecoded == foundation)
        #expect(input[...].formDecoded == foundation)
        #expect(input.percentDecoded == input.removingPercentEncoding)
    }

    @Test func base64URLRoundTripsEveryLengthAndByte() throws {
        for length in 0..<70 {
            let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) })
            let encoded = bytes.base64URLEncodedString()
            let foundation = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Data(base64URLEncoded: encoded) == bytes)
        }
        // Standard-alphabet characters are not base64url.
        #expect(Data(base64URLEncoded: "ab+/") == nil)
        #expect(Data(base64URLEncoded: "a") == nil)
        #expect(Data(base64URLEncoded: "not base64!") == nil)
    }

    @Test func hexMatchesFormatting() {
        let bytes: [UInt8] = [0, 1, 15, 16, 127, 128, 254, 255]
        #expect(bytes.hexString == bytes.map { String(format: "%02x", $0) }.joined())
        #expect([UInt8]().hexString == "")
    }
}
