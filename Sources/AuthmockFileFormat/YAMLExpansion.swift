import Foundation

/// A bound on what a YAML text's aliases expand to, read from the text
/// before any parser sees it. The parser compares a mapping's keys by value
/// while it composes the file, so a key that holds nested aliases (a
/// "billion laughs" of merge keys) is expanded there, before the composed
/// tree could be walked: 3 KB took minutes. An anchored node's extent is
/// read from the text (a flow collection to its closing bracket, a block
/// node to the next line indented no deeper, else the rest of its line), and
/// its size is one plus the sizes of the aliases inside it. Quoted text and
/// comments are skipped; a `*` inside a plain scalar may count as an alias,
/// which can only overestimate.
enum YAMLExpansion {
    private struct Mark {
        var name: Substring
        var offset: Int
        var line: Int
    }

    /// The first line where the aliases' expansion passes `limit`, if any.
    static func lineBeyond(_ limit: Int, in text: String) -> Int? {
        let bytes = Array(text.utf8)
        var anchors: [(mark: Mark, end: Int)] = []
        var aliases: [Mark] = []
        var lineStarts: [Int] = [0]
        var index = 0
        var quote: UInt8? = nil
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") {
                // A quoted scalar may go on over lines.
                lineStarts.append(index + 1)
                index += 1
                continue
            }
            if let open = quote {
                if byte == UInt8(ascii: "\\"), open == UInt8(ascii: "\"") {
                    index += 2
                    continue
                }
                if byte == open { quote = nil }
                index += 1
                continue
            }
            let previous = index > 0 ? bytes[index - 1] : UInt8(ascii: "\n")
            let atStart = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ",")]
                .contains(previous)
            switch byte {
            case UInt8(ascii: "'"),
                UInt8(ascii: "\"") where atStart || previous == UInt8(ascii: ":"):
                quote = byte
                index += 1
            case UInt8(ascii: "#") where atStart:
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "&"), UInt8(ascii: "*"):
                guard atStart else {
                    index += 1
                    continue
                }
                var end = index + 1
                while end < bytes.count, !Self.ends(bytes[end]) { end += 1 }
                let name = Substring(String(decoding: bytes[(index + 1)..<end], as: UTF8.self))
                let mark = Mark(name: name, offset: index, line: lineStarts.count)
                if byte == UInt8(ascii: "&") {
                    anchors.append((mark, Self.extentEnd(of: end, in: bytes, lineStart: lineStarts.last ?? 0)))
                } else {
                    aliases.append(mark)
                }
                index = end
            default:
                index += 1
            }
        }
        guard !aliases.isEmpty else { return nil }
        // Sizes, memoised; an alias names the latest anchor of its name before it.
        var sizes: [Int?] = Array(repeating: nil, count: anchors.count)
        var busy = Set<Int>()
        func target(of alias: Mark) -> Int? {
            anchors.lastIndex { $0.mark.name == alias.name && $0.mark.offset < alias.offset }
        }
        func size(_ anchor: Int) -> Int {
            if let known = sizes[anchor] { return known }
            guard busy.insert(anchor).inserted else { return 1 }
            var total = 1
            let (mark, end) = anchors[anchor]
            for alias in aliases where alias.offset > mark.offset && alias.offset < end {
                total = min(limit + 1, total + (target(of: alias).map(size) ?? 0))
                if total > limit { break }
            }
            busy.remove(anchor)
            sizes[anchor] = total
            return total
        }
        var total = lineStarts.count
        for alias in aliases {
            total = min(limit + 1, total + (target(of: alias).map(size) ?? 0))
            if total > limit { return alias.line }
        }
        return nil
    }

    private static func indent(at lineStart: Int, in bytes: [UInt8]) -> Int {
        var spaces = 0
        while lineStart + spaces < bytes.count, bytes[lineStart + spaces] == UInt8(ascii: " ") { spaces += 1 }
        return spaces
    }

    private static func ends(_ byte: UInt8) -> Bool {
        [
            UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ","), UInt8(ascii: "["),
            UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"),
        ].contains(byte)
    }

    /// Where the node an anchor ending at `start` names ends.
    private static func extentEnd(of start: Int, in bytes: [UInt8], lineStart: Int) -> Int {
        var index = start
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        guard index < bytes.count else { return bytes.count }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // A flow collection: to its closing bracket, quoted text skipped.
            var depth = 0
            var quote: UInt8? = nil
            while index < bytes.count {
                let byte = bytes[index]
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                    quote = byte
                } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    depth += 1
                } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                    depth -= 1
                    if depth == 0 { return index + 1 }
                }
                index += 1
            }
            return bytes.count
        case UInt8(ascii: "\n"), UInt8(ascii: "#"), UInt8(ascii: "\r"):
            // A block node: the lines after, indented deeper than this one
            // (or as deep, as the items of a sequence under a key).
            let base = Self.indent(at: lineStart, in: bytes)
            let underKey = bytes.indices.contains(lineStart + base) && bytes[lineStart + base] != UInt8(ascii: "-")
            while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            var end = index
            while end < bytes.count {
                let next = end + 1
                let spaces = Self.indent(at: next, in: bytes)
                let first = next + spaces < bytes.count ? bytes[next + spaces] : UInt8(ascii: "\n")
                let blank = first == UInt8(ascii: "\n") || first == UInt8(ascii: "#")
                guard blank || spaces > base || spaces == base && underKey && first == UInt8(ascii: "-") else { break }
                end = next
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
            }
            return end
        default:
            // A scalar, or an inline node: the rest of its line.
            while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            return index
        }
    }
}
