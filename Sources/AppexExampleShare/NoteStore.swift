import AppexExtensionKit

/// Notes live in the container as Documents/notes/001.txt, 002.txt, ...
enum NoteStore {
    static let directory = "Documents/notes"

    struct Saved {
        var number: Int
        var relativePath: String
    }

    /// Writes `note` under the next free number. Creation is exclusive, so two requests served
    /// at once never write the same file: the loser moves on to the next number.
    static func save(_ note: Note) throws(ContainerError) -> Saved {
        let path = try ExtensionContainer.directory(directory)
        var number = try highestNumber(in: path) + 1
        while true {
            let name = fileName(number)
            if try ExtensionContainer.create(Array(note.contents(number: number).utf8), at: path + "/" + name, exclusive: true) {
                return Saved(number: number, relativePath: directory + "/" + name)
            }
            number += 1
        }
    }

    static func highestNumber(in path: String) throws(ContainerError) -> Int {
        try ExtensionContainer.names(in: path).compactMap { name -> Int? in
            guard name.hasSuffix(".txt") else { return nil }
            return Int(name.dropLast(4))
        }.max() ?? 0
    }

    /// Three digits, zero-padded (more when the count outgrows them).
    static func fileName(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits + ".txt"
    }
}
