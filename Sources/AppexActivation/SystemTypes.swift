/// The system-declared uniform types, written from Apple's UTCoreTypes documentation.
///
/// Order matters only for tags: the first type to claim an extension or MIME type is the one
/// `type(forFilenameExtension:)` returns, so the preferred type for a tag comes first.
enum SystemTypes {
    private typealias D = UTTypeDeclaration

    static let declarations: [UTTypeDeclaration] = [
        // Roots of the physical (item) and functional (content) hierarchies.
        D("public.item"),
        D("public.content"),
        D("public.composite-content", conformsTo: ["public.content"]),
        D("public.data", conformsTo: ["public.item"]),
        D("public.directory", conformsTo: ["public.item"]),
        D("public.folder", conformsTo: ["public.directory"]),
        D("public.volume", conformsTo: ["public.folder"]),
        D("com.apple.package", conformsTo: ["public.directory"]),
        D("com.apple.bundle", conformsTo: ["public.directory"]),
        D("public.symlink", conformsTo: ["public.item"]),
        D("com.apple.alias-file", conformsTo: ["public.data"]),
        D("public.executable", conformsTo: ["public.item"]),
        D("public.unix-executable", conformsTo: ["public.data", "public.executable"]),
        D("com.microsoft.windows-executable", conformsTo: ["public.data", "public.executable"], extensions: ["exe"]),
        D("com.apple.application", conformsTo: ["public.data"]),
        D("com.apple.application-bundle", conformsTo: ["com.apple.application", "com.apple.bundle", "com.apple.package"], extensions: ["app"]),
        D("com.apple.app-extension", conformsTo: ["com.apple.bundle", "com.apple.package"], extensions: ["appex"]),

        // Links.
        D("public.url", conformsTo: ["public.data"]),
        D("public.file-url", conformsTo: ["public.url"]),

        // Text.
        D("public.text", conformsTo: ["public.data", "public.content"]),
        D("public.plain-text", conformsTo: ["public.text"], extensions: ["txt", "text"], mimeTypes: ["text/plain"]),
        D("public.utf8-plain-text", conformsTo: ["public.plain-text"]),
        D("public.utf16-plain-text", conformsTo: ["public.plain-text"]),
        D("public.utf16-external-plain-text", conformsTo: ["public.plain-text"]),
        D("public.delimited-values-text", conformsTo: ["public.text"]),
        D(
            "public.comma-separated-values-text", conformsTo: ["public.delimited-values-text"], extensions: ["csv"],
            mimeTypes: ["text/csv", "text/comma-separated-values"]),
        D(
            "public.tab-separated-values-text", conformsTo: ["public.delimited-values-text"], extensions: ["tsv"],
            mimeTypes: ["text/tab-separated-values"]),
        D("public.utf8-tab-separated-values-text", conformsTo: ["public.tab-separated-values-text"]),
        D("public.rtf", conformsTo: ["public.text"], extensions: ["rtf"], mimeTypes: ["text/rtf", "application/rtf"]),
        D("public.html", conformsTo: ["public.text"], extensions: ["html", "htm", "shtml"], mimeTypes: ["text/html"]),
        D("public.xml", conformsTo: ["public.text"], extensions: ["xml"], mimeTypes: ["application/xml", "text/xml"]),
        D("public.xhtml", conformsTo: ["public.xml", "public.html"], extensions: ["xhtml", "xht"], mimeTypes: ["application/xhtml+xml"]),
        D("public.json", conformsTo: ["public.text"], extensions: ["json"], mimeTypes: ["application/json"]),
        D(
            "public.yaml", conformsTo: ["public.text"], extensions: ["yaml", "yml"],
            mimeTypes: ["application/yaml", "application/x-yaml", "text/yaml"]),
        D("public.css", conformsTo: ["public.text"], extensions: ["css"], mimeTypes: ["text/css"]),
        D("public.log", conformsTo: ["public.text"], extensions: ["log"]),
        D("net.daringfireball.markdown", conformsTo: ["public.plain-text"], extensions: ["md", "markdown"], mimeTypes: ["text/markdown"]),
        D("public.source-code", conformsTo: ["public.plain-text"]),
        D("public.c-source", conformsTo: ["public.source-code"], extensions: ["c"], mimeTypes: ["text/x-c"]),
        D("public.c-header", conformsTo: ["public.source-code"], extensions: ["h"]),
        D("public.c-plus-plus-source", conformsTo: ["public.source-code"], extensions: ["cpp", "cc", "cxx", "c++"]),
        D("public.objective-c-source", conformsTo: ["public.source-code"], extensions: ["m"]),
        D("public.swift-source", conformsTo: ["public.source-code"], extensions: ["swift"]),
        D("public.assembly-source", conformsTo: ["public.source-code"], extensions: ["s"]),
        D("public.script", conformsTo: ["public.source-code"]),
        D("public.shell-script", conformsTo: ["public.script"], extensions: ["sh", "command"], mimeTypes: ["application/x-sh"]),
        D("public.python-script", conformsTo: ["public.script"], extensions: ["py"], mimeTypes: ["text/x-python"]),
        D("public.ruby-script", conformsTo: ["public.script"], extensions: ["rb"]),
        D("public.perl-script", conformsTo: ["public.script"], extensions: ["pl", "pm"]),
        D("public.php-script", conformsTo: ["public.script"], extensions: ["php"]),
        D(
            "com.netscape.javascript-source", conformsTo: ["public.script"], extensions: ["js", "mjs"],
            mimeTypes: ["text/javascript", "application/javascript"]),

        // Contacts, calendars.
        D("public.contact", conformsTo: ["public.content"]),
        D(
            "public.vcard", conformsTo: ["public.text", "public.contact"], extensions: ["vcf", "vcard"],
            mimeTypes: ["text/vcard", "text/x-vcard", "text/directory"]),
        D("public.calendar-event", conformsTo: ["public.content"]),
        D("com.apple.ical.ics", conformsTo: ["public.data", "public.calendar-event"], extensions: ["ics"], mimeTypes: ["text/calendar"]),
        D("public.to-do-item", conformsTo: ["public.content"]),

        // Images.
        D("public.image", conformsTo: ["public.data", "public.content"]),
        D("public.jpeg", conformsTo: ["public.image"], extensions: ["jpeg", "jpg", "jpe"], mimeTypes: ["image/jpeg", "image/jpg"]),
        D("public.png", conformsTo: ["public.image"], extensions: ["png"], mimeTypes: ["image/png"]),
        D("com.compuserve.gif", conformsTo: ["public.image"], extensions: ["gif"], mimeTypes: ["image/gif"]),
        D("public.tiff", conformsTo: ["public.image"], extensions: ["tiff", "tif"], mimeTypes: ["image/tiff"]),
        D("public.heif-standard", conformsTo: ["public.image"]),
        D("public.heic", conformsTo: ["public.heif-standard"], extensions: ["heic"], mimeTypes: ["image/heic"]),
        D("public.heif", conformsTo: ["public.heif-standard"], extensions: ["heif"], mimeTypes: ["image/heif"]),
        D("com.microsoft.bmp", conformsTo: ["public.image"], extensions: ["bmp"], mimeTypes: ["image/bmp"]),
        D("com.microsoft.ico", conformsTo: ["public.image"], extensions: ["ico"], mimeTypes: ["image/vnd.microsoft.icon", "image/x-icon"]),
        D("public.svg-image", conformsTo: ["public.image"], extensions: ["svg"], mimeTypes: ["image/svg+xml"]),
        D("org.webmproject.webp", conformsTo: ["public.image"], extensions: ["webp"], mimeTypes: ["image/webp"]),
        D("public.avif", conformsTo: ["public.image"], extensions: ["avif"], mimeTypes: ["image/avif"]),
        D("public.jpeg-2000", conformsTo: ["public.image"], extensions: ["jp2"], mimeTypes: ["image/jp2"]),
        D("com.adobe.photoshop-image", conformsTo: ["public.image"], extensions: ["psd"], mimeTypes: ["image/vnd.adobe.photoshop"]),
        D("com.apple.icns", conformsTo: ["public.image"], extensions: ["icns"]),
        D("public.camera-raw-image", conformsTo: ["public.image"]),
        D("com.adobe.raw-image", conformsTo: ["public.camera-raw-image"], extensions: ["dng"], mimeTypes: ["image/x-adobe-dng"]),

        // Audio and video.
        D("public.audiovisual-content", conformsTo: ["public.data", "public.content"]),
        D("public.movie", conformsTo: ["public.audiovisual-content"]),
        D("public.video", conformsTo: ["public.movie"]),
        D("public.audio", conformsTo: ["public.audiovisual-content"]),
        D("com.apple.quicktime-movie", conformsTo: ["public.movie"], extensions: ["mov", "qt"], mimeTypes: ["video/quicktime"]),
        D("public.mpeg-4", conformsTo: ["public.movie"], extensions: ["mp4", "mpeg4"], mimeTypes: ["video/mp4"]),
        D("com.apple.m4v-video", conformsTo: ["public.movie"], extensions: ["m4v"], mimeTypes: ["video/x-m4v"]),
        D("public.avi", conformsTo: ["public.movie"], extensions: ["avi"], mimeTypes: ["video/avi", "video/x-msvideo"]),
        D("public.mpeg", conformsTo: ["public.movie"], extensions: ["mpg", "mpeg"], mimeTypes: ["video/mpeg"]),
        D("public.mpeg-2-video", conformsTo: ["public.movie"], extensions: ["m2v"]),
        D("public.mpeg-2-transport-stream", conformsTo: ["public.movie"], extensions: ["ts", "m2ts"], mimeTypes: ["video/mp2t"]),
        D("public.3gpp", conformsTo: ["public.movie"], extensions: ["3gp", "3gpp"], mimeTypes: ["video/3gpp"]),
        D("public.3gpp2", conformsTo: ["public.movie"], extensions: ["3g2", "3gp2"], mimeTypes: ["video/3gpp2"]),
        D("org.webmproject.webm", conformsTo: ["public.movie"], extensions: ["webm"], mimeTypes: ["video/webm"]),
        D("public.mp3", conformsTo: ["public.audio"], extensions: ["mp3"], mimeTypes: ["audio/mpeg", "audio/mp3"]),
        D("public.mpeg-4-audio", conformsTo: ["public.mpeg-4", "public.audio"], extensions: ["m4a"], mimeTypes: ["audio/mp4", "audio/x-m4a"]),
        D("public.aifc-audio", conformsTo: ["public.audio"], extensions: ["aifc"], mimeTypes: ["audio/x-aifc"]),
        D("public.aiff-audio", conformsTo: ["public.aifc-audio"], extensions: ["aiff", "aif"], mimeTypes: ["audio/aiff", "audio/x-aiff"]),
        D(
            "com.microsoft.waveform-audio", conformsTo: ["public.audio"], extensions: ["wav", "wave"],
            mimeTypes: ["audio/wav", "audio/x-wav", "audio/vnd.wave"]),
        D("public.midi-audio", conformsTo: ["public.audio"], extensions: ["mid", "midi"], mimeTypes: ["audio/midi", "audio/x-midi"]),
        D("org.xiph.flac", conformsTo: ["public.audio"], extensions: ["flac"], mimeTypes: ["audio/flac"]),
        D("com.apple.coreaudio-format", conformsTo: ["public.audio"], extensions: ["caf"], mimeTypes: ["audio/x-caf"]),
        D("public.playlist", conformsTo: ["public.content"]),
        D(
            "public.m3u-playlist", conformsTo: ["public.text", "public.playlist"], extensions: ["m3u", "m3u8"],
            mimeTypes: ["audio/mpegurl", "audio/x-mpegurl", "application/vnd.apple.mpegurl"]),

        // Documents.
        D("com.adobe.pdf", conformsTo: ["public.data", "public.composite-content"], extensions: ["pdf"], mimeTypes: ["application/pdf"]),
        D("com.apple.rtfd", conformsTo: ["com.apple.package", "public.composite-content"], extensions: ["rtfd"]),
        D("com.apple.flat-rtfd", conformsTo: ["public.data", "public.composite-content"]),
        D(
            "com.apple.webarchive", conformsTo: ["public.data", "public.composite-content"], extensions: ["webarchive"],
            mimeTypes: ["application/x-webarchive"]),
        D("public.presentation", conformsTo: ["public.composite-content"]),
        D("public.spreadsheet", conformsTo: ["public.content"]),
        D("com.microsoft.word.doc", conformsTo: ["public.data", "public.composite-content"], extensions: ["doc"], mimeTypes: ["application/msword"]),
        D(
            "com.microsoft.excel.xls", conformsTo: ["public.data", "public.spreadsheet"], extensions: ["xls"], mimeTypes: ["application/vnd.ms-excel"]
        ),
        D(
            "com.microsoft.powerpoint.ppt", conformsTo: ["public.data", "public.presentation"], extensions: ["ppt"],
            mimeTypes: ["application/vnd.ms-powerpoint"]),

        // Archives (after the documents that are zip containers would be wrong: declared here,
        // forward references below are fine).
        D("public.archive", conformsTo: ["public.data"]),
        D("com.pkware.zip-archive", conformsTo: ["public.data", "public.archive"], extensions: ["zip"], mimeTypes: ["application/zip"]),
        D("public.zip-archive", conformsTo: ["com.pkware.zip-archive"]),
        D(
            "org.gnu.gnu-zip-archive", conformsTo: ["public.data", "public.archive"], extensions: ["gz", "gzip"],
            mimeTypes: ["application/gzip", "application/x-gzip"]),
        D("public.tar-archive", conformsTo: ["public.data", "public.archive"], extensions: ["tar"], mimeTypes: ["application/x-tar"]),
        D("org.gnu.gnu-tar-archive", conformsTo: ["public.tar-archive"], extensions: ["gtar"]),
        D("public.bzip2-archive", conformsTo: ["public.data", "public.archive"], extensions: ["bz2"], mimeTypes: ["application/x-bzip2"]),
        D("org.7-zip.7-zip-archive", conformsTo: ["public.data", "public.archive"], extensions: ["7z"], mimeTypes: ["application/x-7z-compressed"]),
        D("public.disk-image", conformsTo: ["public.archive"]),
        D("com.apple.disk-image", conformsTo: ["public.disk-image"], extensions: ["dmg"]),
        D("org.openxmlformats.openxml", conformsTo: ["public.zip-archive"]),
        D(
            "org.openxmlformats.wordprocessingml.document", conformsTo: ["org.openxmlformats.openxml", "public.composite-content"],
            extensions: ["docx"], mimeTypes: ["application/vnd.openxmlformats-officedocument.wordprocessingml.document"]),
        D(
            "org.openxmlformats.spreadsheetml.sheet", conformsTo: ["org.openxmlformats.openxml", "public.spreadsheet"], extensions: ["xlsx"],
            mimeTypes: ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"]),
        D(
            "org.openxmlformats.presentationml.presentation", conformsTo: ["org.openxmlformats.openxml", "public.presentation"], extensions: ["pptx"],
            mimeTypes: ["application/vnd.openxmlformats-officedocument.presentationml.presentation"]),
        D(
            "org.idpf.epub-container", conformsTo: ["public.zip-archive", "public.composite-content"], extensions: ["epub"],
            mimeTypes: ["application/epub+zip"]),

        // Apple data formats.
        D("com.apple.property-list", conformsTo: ["public.data"], extensions: ["plist"], mimeTypes: ["application/x-plist"]),
        D("com.apple.xml-property-list", conformsTo: ["public.xml", "com.apple.property-list"]),
        D("com.apple.binary-property-list", conformsTo: ["com.apple.property-list"]),
        D("com.apple.pkpass", conformsTo: ["public.data", "public.content"], extensions: ["pkpass"], mimeTypes: ["application/vnd.apple.pkpass"]),

        // Fonts and 3D.
        D("public.font", conformsTo: ["public.data", "public.content"]),
        D("public.truetype-ttf-font", conformsTo: ["public.font"], extensions: ["ttf"], mimeTypes: ["font/ttf"]),
        D("public.opentype-font", conformsTo: ["public.font"], extensions: ["otf"], mimeTypes: ["font/otf"]),
        D("public.3d-content", conformsTo: ["public.content"]),
    ]
}
