//! Image references as the API server reads them for the default
//! `imagePullPolicy`: the tag a reference resolves to (upstream
//! `parsers.ParseImageName`).

/// The pull policy the server picks for `image`: Always when the tag is
/// `latest` or no tag and no digest is given, IfNotPresent otherwise
/// (including references the server cannot parse).
pub fn image_pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some(tag) if tag == "latest" => "Always",
        _ => "IfNotPresent",
    }
}

/// The tag the image reference resolves to, `latest` when it names neither a
/// tag nor a digest, `None` when it has a digest and no tag or cannot be
/// parsed (upstream `parsers.ParseImageName`).
fn image_tag(image: &str) -> Option<String> {
    if image.is_empty() || image.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_slash = name.rfind('/');
    let (repository, tag) = match name.rfind(':') {
        Some(colon) if last_slash.is_none_or(|slash| colon > slash) => (&name[..colon], Some(&name[colon + 1..])),
        _ => (name, None),
    };
    // Docker reference grammar: the path (after an optional domain) is
    // lower case; tags are word characters, '.' and '-', at most 128.
    let path = match repository.split_once('/') {
        Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => rest,
        _ => repository,
    };
    if repository.is_empty() || path.chars().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    if let Some(tag) = tag {
        let valid = !tag.is_empty()
            && tag.len() <= 128
            && tag.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            && !tag.starts_with(['.', '-']);
        if !valid {
            return None;
        }
        return Some(tag.to_owned());
    }
    match digest {
        Some(_) => None,
        None => Some("latest".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_pull_policy_follows_the_tag() {
        let cases = [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("registry.k8s.io/pause:3.10", "IfNotPresent"),
            ("localhost:5000/app", "Always"),
            ("localhost:5000/app:v1", "IfNotPresent"),
            ("nginx@sha256:0123", "IfNotPresent"),
            ("nginx:latest@sha256:0123", "Always"),
            ("Nginx", "IfNotPresent"),
            ("", "IfNotPresent"),
        ];
        for (image, want) in cases {
            assert_eq!(image_pull_policy(image), want, "{image}");
        }
    }
}
