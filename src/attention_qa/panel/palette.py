"""The book's colours, named once for every explorer.

The qualitative colours are Paul Tol's "bright" scheme (Tol, "Colour Schemes", SRON technical
note SRON/EPS/TN/09-002), chosen to stay distinct under the common colour-vision
deficiencies; the book's blue comes first. A pale grey and white fill empty cells; two dark
greys draw reference lines and secondary text. Explorers that paint whole arrays give the
same colours as RGB(A) fractions, each with its hex code in a comment.
"""

BLUE = "#4477aa"
RED = "#ee6677"
GREEN = "#228833"
YELLOW = "#ccbb44"
CYAN = "#66ccee"
PURPLE = "#aa3377"
GREY = "#bbbbbb"
PALE_GREY = "#eeeeee"  # the background of cells that hold no value
WHITE = "#ffffff"  # an empty cell
INK = "#222222"  # reference lines, markers and outlines
INK_LIGHT = "#555555"  # secondary lines and text
