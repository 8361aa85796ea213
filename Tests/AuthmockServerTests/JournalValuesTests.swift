import AuthmockCore
import AuthmockModel
import Crypto
import Foundation
import Testing

@testable import AuthmockServer

/// The journal keeps token ids and body hashes inline; on the wire and
/// through the public properties they must stay exactly the text they were.
struct JournalValuesTests {
    @Test(arguments: [
        "3f2c7a9e-1b4d-4e8f-9a6b-0c1d2e3f4a5b",  // a jti: inline
        "3F2C7A9E-1B4D-4E8F-9A6B-0C1D2E3F4A5B",  // uppercase: kept as text, spelled as sent
        "rt_9f3a",
        "rt_0",
        "rt_ffffffffffffffff",
        "rt_0abc",  // a leading zero would not spell back: text
        "rt_",
        "rt_10000000000000000",  // past 64 bits
        "rt_ABC",
        "not-a-token-id-at-all-but-longer-than-fifteen",
        "",
    ])
    func idsSpellBackExactly(text: String) throws {
        #expect(TokenID(text).text == text)
        let token = PresentedToken(kind: .access, id: text, state: .valid)
        #expect(token.id == text)
        let json = try JSONEncoder().encode(token)
        #expect(String(decoding: json, as: UTF8.self).contains("\"id\":\"\(text)\""))
        #expect(try JSONDecoder().decode(PresentedToken.self, from: json) == token)
    }

    @Test func randomIdsAreVersion4UUIDsSpelledLowercase() {
        let ids = (0..<200).map { _ in TokenID.randomUUID() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let uuid = UUID(uuidString: id.text)
            #expect(uuid?.uuidString.lowercased() == id.text && id.heapBytes == 0, "\(id)")
            #expect(uuid.map { $0.uuid.6 >> 4 == 4 && $0.uuid.8 >> 6 == 2 } == true, "\(id)")
            #expect(TokenID(id.text) == id)
        }
    }

    @Test func randomRefreshIdsSpellAsRandomTokenSpellsThem() {
        for _ in 0..<200 {
            let id = TokenID.randomRefreshID()
            #expect(id.text.hasPrefix("rt_") && (4...19).contains(id.text.count) && id.heapBytes == 0, "\(id)")
            #expect(UInt64(id.text.dropFirst(3), radix: 16).map { "rt_" + String($0, radix: 16) } == id.text)
            #expect(TokenID(id.text) == id)
        }
    }

    @Test func serverShapedIdsTakeNoHeap() {
        #expect(TokenID("3f2c7a9e-1b4d-4e8f-9a6b-0c1d2e3f4a5b").heapBytes == 0)
        #expect(TokenID("rt_9f3a1c22d4e5b6a7").heapBytes == 0)
        #expect(TokenID("an-id-a-client-made-up-itself").heapBytes > 0)
    }

    @Test func bodyDigestsSpellTheirHexAndKeepOtherText() throws {
        let digest = SHA256.hash(data: Data("grant_type=refresh_token".utf8))
        let hex = digest.map { String(format: "%02x", $0) }.joined()
        #expect(BodyDigest(sha256: digest).text == hex)
        #expect(BodyDigest(hex).text == hex)
        #expect(BodyDigest(hex) == BodyDigest(sha256: digest))
        #expect(BodyDigest(hex).heapBytes == 0)
        for other in ["A" + hex.dropFirst(), String(hex.dropLast()), "hello", ""] {
            #expect(BodyDigest(other).text == other)
        }
    }

    @Test func entriesEncodeTheSameFieldsAsStrings() throws {
        var entry = JournalEntry(
            seq: 1, virtualTime: Date(timeIntervalSince1970: 0), realTime: Date(timeIntervalSince1970: 0), method: "POST",
            path: "/oauth/token", host: nil, kind: .refresh, scheme: "Basic", bodySHA256: String(repeating: "ab", count: 32),
            bodyBytes: 10, status: 200, undelivered: false, durationMs: 1)
        entry.issuedAccess = "3f2c7a9e-1b4d-4e8f-9a6b-0c1d2e3f4a5b"
        entry.issuedRefresh = "rt_12ab"
        let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(entry)) as? [String: Any])
        #expect(object["bodySHA256"] as? String == String(repeating: "ab", count: 32))
        #expect(object["issuedAccess"] as? String == "3f2c7a9e-1b4d-4e8f-9a6b-0c1d2e3f4a5b")
        #expect(object["issuedRefresh"] as? String == "rt_12ab")
        #expect(object["issuedAccessID"] == nil && object["bodyDigest"] == nil)
        #expect(try JSONDecoder().decode(JournalEntry.self, from: JSONEncoder().encode(entry)) == entry)
        // A refresh grant's entry holds nothing on the heap: it costs its slot only.
        #expect(entry.heapBytes == 0)
    }

    /// The byte bound counts the ring's slots, used or not, and the strings:
    /// the journal fills it (not a fraction of it) and never passes it,
    /// whether its entries are small or carry long paths.
    @Test(arguments: [0, 300])
    func theJournalFillsItsByteBoundAndStaysUnderIt(pathBytes: Int) {
        let maxBytes = 1 << 20
        let journal = MemoryJournal(capacity: 1_000_000, maxBytes: maxBytes)
        func entry(_ seq: Int) -> JournalEntry {
            JournalEntry(
                seq: seq, virtualTime: Date(), realTime: Date(), method: "GET", path: "/api/me" + String(repeating: "x", count: pathBytes),
                host: nil, kind: .resource, scheme: "Bearer", bodyBytes: 0, status: 200, undelivered: false, durationMs: 0)
        }
        let perEntry = MemoryLayout<JournalEntry>.stride + entry(0).heapBytes
        for seq in 1...(4 * maxBytes / perEntry) {
            journal.append(entry(seq))
            #expect(journal.usage().bytes <= maxBytes)
        }
        let usage = journal.usage()
        #expect(usage.bytes <= maxBytes && usage.bytes >= usage.entries * perEntry, "\(usage)")
        #expect(usage.entries >= maxBytes / perEntry * 9 / 10, "\(usage.entries) entries of at most \(maxBytes / perEntry)")
        #expect(journal.entries().entries.last?.seq == 4 * maxBytes / perEntry)
    }

    /// Arrivals are counted per kind by its ordinal: no two kinds may share one.
    @Test func arrivalCountsKeepEveryKindApart() {
        let arrivals = ArrivalCounts()
        for (index, kind) in RouteKind.allCases.enumerated() {
            for _ in 0...index { arrivals.note(kind) }
        }
        for (index, kind) in RouteKind.allCases.enumerated() { #expect(arrivals.count([kind]) == index + 1, "\(kind)") }
        #expect(arrivals.count([.login, .refresh]) == 3)
        arrivals.reset()
        #expect(arrivals.count(Set(RouteKind.allCases)) == 0)
    }
}
